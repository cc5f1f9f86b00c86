import { useState } from 'preact/hooks';
import { createApiKey } from '../api/api-keys';
import { EXPIRY_OPTIONS, type ExpiryChoice, expiresAt, SCOPE_TEXT, today } from '../api-keys';
import { API_KEY_SCOPES, type ApiKey, type CreatedApiKey } from '../types';
import { Alert } from './Alert';
import { InputField, SelectField } from './Field';

/** The API's limit on a key's name. */
const NAME_MAX_LENGTH = 100;

/** Creates an API key: a name, a scope and when it expires. */
export function ApiKeyForm({ onCreated }: { onCreated: (created: CreatedApiKey) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<ApiKey['scope']>('write');
  const [expiry, setExpiry] = useState<ExpiryChoice>('never');
  const [day, setDay] = useState('');
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<unknown>(null);

  // Never rejects (failures are shown through setError), so the form fires and forgets it.
  const create = async (event: Event) => {
    event.preventDefault();
    setCreating(true);
    setError(null);
    try {
      onCreated(await createApiKey({ name: name.trim(), scope, expires_at: expiresAt(expiry, day) }));
      setName('');
    } catch (err) {
      setError(err);
    } finally {
      setCreating(false);
    }
  };

  return (
    <section class="card" aria-labelledby="new-key-form-heading">
      <h2 id="new-key-form-heading">New API key</h2>
      <form class="api-key-form" onSubmit={(event) => void create(event)}>
        <InputField
          id="api-key-name"
          label="Name"
          placeholder="e.g. CI deploy checks"
          hint="What it is for, to recognise it in the list."
          required
          maxLength={NAME_MAX_LENGTH}
          value={name}
          onInput={setName}
        />
        <ScopeChoice value={scope} onChange={setScope} />
        <ExpiryFields expiry={expiry} day={day} onExpiry={setExpiry} onDay={setDay} />
        <button type="submit" class="btn btn-primary" data-testid="create-api-key" disabled={creating}>
          {creating ? 'Creating…' : 'Create API key'}
        </button>
      </form>
      <Alert error={error} testId="api-key-error" />
    </section>
  );
}

/** The scopes as radio buttons, each named by its label and described by what it may do. */
function ScopeChoice({
  value,
  onChange,
}: {
  value: ApiKey['scope'];
  onChange: (scope: ApiKey['scope']) => void;
}) {
  return (
    <fieldset class="choice-group">
      <legend>Scope</legend>
      {API_KEY_SCOPES.map((scope) => {
        const id = `api-key-scope-${scope}`;
        return (
          <div key={scope} class="choice">
            <input
              id={id}
              type="radio"
              name="api-key-scope"
              value={scope}
              aria-describedby={`${id}-hint`}
              checked={value === scope}
              onChange={() => onChange(scope)}
            />
            <div>
              <label for={id}>{SCOPE_TEXT[scope].label}</label>
              <p id={`${id}-hint`} class="hint">
                {SCOPE_TEXT[scope].explanation}
              </p>
            </div>
          </div>
        );
      })}
    </fieldset>
  );
}

interface ExpiryProps {
  expiry: ExpiryChoice;
  day: string;
  onExpiry: (expiry: ExpiryChoice) => void;
  onDay: (day: string) => void;
}

function ExpiryFields({ expiry, day, onExpiry, onDay }: ExpiryProps) {
  return (
    <div class="expiry-fields">
      <SelectField
        id="api-key-expiry"
        label="Expires"
        value={expiry}
        options={EXPIRY_OPTIONS}
        onChange={onExpiry}
      />
      {expiry === 'date' && (
        <div class="field">
          <label for="api-key-expiry-day">Expiry date</label>
          <input
            id="api-key-expiry-day"
            type="date"
            required
            min={today()}
            aria-describedby="api-key-expiry-day-hint"
            value={day}
            onInput={(e) => onDay(e.currentTarget.value)}
          />
          <p id="api-key-expiry-day-hint" class="hint">
            It stops working at the end of this day, your time.
          </p>
        </div>
      )}
    </div>
  );
}
