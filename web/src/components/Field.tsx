interface FieldProps<T> {
  id: string;
  label: string;
  value: T;
  /** Shown under the control and linked to it (aria-describedby). */
  hint?: string;
  /** Takes the room left on its line (for long values and placeholders). */
  grow?: boolean;
}

interface InputFieldProps extends FieldProps<string> {
  onInput: (value: string) => void;
  type?: 'text' | 'password' | 'number';
  placeholder?: string;
  required?: boolean;
  maxLength?: number;
  min?: number;
  max?: number;
}

/** A labelled input. A password is never autofilled (it is a secret to store, not the user's own). */
export function InputField({
  id,
  label,
  value,
  hint,
  grow,
  onInput,
  type = 'text',
  ...rest
}: InputFieldProps) {
  return (
    <div class={grow ? 'field grow' : 'field'}>
      <label for={id}>{label}</label>
      <input
        id={id}
        type={type}
        autoComplete={type === 'password' ? 'new-password' : 'off'}
        spellcheck={false}
        aria-describedby={hint ? `${id}-hint` : undefined}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        {...rest}
      />
      {hint && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
    </div>
  );
}

interface SelectFieldProps<T extends string> extends FieldProps<T> {
  /** [value, text] pairs, in order. */
  options: readonly (readonly [T, string])[];
  onChange: (value: T) => void;
}

/** A labelled select of `options`. */
export function SelectField<T extends string>({
  id,
  label,
  value,
  hint,
  grow,
  options,
  onChange,
}: SelectFieldProps<T>) {
  return (
    <div class={grow ? 'field grow' : 'field'}>
      <label for={id}>{label}</label>
      <select
        id={id}
        aria-describedby={hint ? `${id}-hint` : undefined}
        value={value}
        onChange={(e) => onChange(e.currentTarget.value as T)}
      >
        {options.map(([option, text]) => (
          <option key={option} value={option}>
            {text}
          </option>
        ))}
      </select>
      {hint && (
        <p id={`${id}-hint`} class="hint">
          {hint}
        </p>
      )}
    </div>
  );
}
