import type { FilterRule } from '../types';

const EXAMPLE = '{"body": {"type": {"$startsWith": "invoice."}}}';

/** The text of a filter field: blank is no filter (every event); else a JSON object the server checks. */
export function parseFilter(text: string): { filter: FilterRule | null } | { error: string } {
  if (text.trim() === '') return { filter: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: `The filter is not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { error: `The filter must be a JSON object, e.g. ${EXAMPLE}` };
  return { filter: value as FilterRule };
}

interface Props {
  id: string;
  label: string;
  value: string;
  onInput: (value: string) => void;
}

/** A destination filter written as JSON. */
export function FilterField({ id, label, value, onInput }: Props) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="filter-json"
        rows={5}
        spellcheck={false}
        placeholder={EXAMPLE}
        aria-describedby={`${id}-hint`}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      <p id={`${id}-hint`} class="hint">
        Match <code>body</code>, <code>headers</code>, <code>query</code> or <code>method</code> by value or
        with <code>$in</code>, <code>$gt</code>, <code>$startsWith</code>, <code>$exists</code>,{' '}
        <code>$or</code>… Empty: every event.
      </p>
    </div>
  );
}
