import { useEffect, useRef, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { localTime } from '../format';
import { canWrite, ROLE_TEXT } from '../roles';
import { href } from '../router';
import type { Endpoint } from '../types';
import { Alert } from './Alert';
import { CopyButton } from './CopyButton';
import { StatusBadge } from './StatusBadge';

interface Props {
  endpoint: Endpoint;
  /** The name of the team it belongs to; null for a personal endpoint. */
  teamName: string | null;
  onChange: (endpoint: Endpoint) => void;
  onDelete: (endpoint: Endpoint) => void;
}

export function EndpointRow({ endpoint, teamName, onChange, onDelete }: Props) {
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState(endpoint.name);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const input = useRef<HTMLInputElement>(null);
  const renameButton = useRef<HTMLButtonElement>(null);
  const refocusRename = useRef(false);

  useEffect(() => {
    if (editing) input.current?.select();
    else if (refocusRename.current) {
      refocusRename.current = false;
      renameButton.current?.focus();
    }
  }, [editing]);

  const startEdit = () => {
    setDraft(endpoint.name);
    setError(null);
    setEditing(true);
  };
  const stopEdit = () => {
    refocusRename.current = true;
    setEditing(false);
  };

  // save and toggleActive never reject (failures are shown through setError): handlers fire and forget them.
  const save = async (event: Event) => {
    event.preventDefault();
    const name = draft.trim();
    if (!name) {
      setError('The name cannot be empty.');
      return;
    }
    if (name === endpoint.name) return stopEdit();
    setSaving(true);
    setError(null);
    try {
      const { endpoint: updated } = await api<{ endpoint: Endpoint }>(endpointPath(endpoint.id), {
        method: 'PATCH',
        body: { name },
      });
      onChange(updated);
      stopEdit();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  const toggleActive = async () => {
    const next = !endpoint.is_active;
    setError(null);
    onChange({ ...endpoint, is_active: next }); // optimistic
    try {
      const { endpoint: updated } = await api<{ endpoint: Endpoint }>(endpointPath(endpoint.id), {
        method: 'PATCH',
        body: { is_active: next },
      });
      onChange(updated);
    } catch (err) {
      onChange({ ...endpoint, is_active: !next });
      setError(err);
    }
  };

  const toggleId = `active-${endpoint.id}`;
  const writable = canWrite(endpoint.role);
  return (
    <li class="endpoint-row" data-testid="endpoint-row" data-endpoint-id={endpoint.id}>
      <div class="endpoint-main">
        {editing ? (
          <form
            class="rename-form"
            onSubmit={(event) => void save(event)}
            onKeyDown={(e) => e.key === 'Escape' && stopEdit()}
          >
            <label class="rename-label" for={`rename-${endpoint.id}`}>
              New name for “{endpoint.name}”
            </label>
            <input
              id={`rename-${endpoint.id}`}
              ref={input}
              type="text"
              data-testid="rename-input"
              maxLength={200}
              value={draft}
              onInput={(e) => setDraft(e.currentTarget.value)}
            />
            <button
              type="submit"
              class="btn btn-small btn-primary"
              data-testid="rename-save"
              disabled={saving}
            >
              {saving ? 'Saving…' : 'Save'}
            </button>
            <button type="button" class="btn btn-small" onClick={stopEdit} disabled={saving}>
              Cancel
            </button>
          </form>
        ) : (
          <div class="endpoint-title">
            <a class="endpoint-name" href={href.endpoint(endpoint.id)} data-testid="endpoint-link">
              {endpoint.name}
            </a>
            <StatusBadge status={endpoint.is_active ? 'active' : 'inactive'} />
            {teamName !== null && <TeamBadge name={teamName} role={endpoint.role} />}
            {writable && (
              <button
                type="button"
                class="btn btn-small btn-ghost"
                ref={renameButton}
                data-testid="rename-endpoint"
                aria-label={`Rename ${endpoint.name}`}
                onClick={startEdit}
              >
                Rename
              </button>
            )}
          </div>
        )}
        <p class="muted small">Created {localTime(endpoint.created_at)}</p>
      </div>

      <div class="endpoint-url">
        <code class="url" data-testid="capture-url">
          {endpoint.capture_url}
        </code>
        <CopyButton
          text={endpoint.capture_url}
          testId="copy-capture-url"
          ariaLabel={`Copy capture URL of ${endpoint.name}`}
        />
      </div>

      {writable && (
        <div class="endpoint-actions">
          <label class="switch" for={toggleId}>
            <input
              id={toggleId}
              type="checkbox"
              role="switch"
              data-testid="endpoint-active-toggle"
              aria-label={`Active: ${endpoint.name}`}
              checked={endpoint.is_active}
              onChange={() => void toggleActive()}
            />
            <span>Active</span>
          </label>
          <button
            type="button"
            class="btn btn-small btn-danger-outline"
            data-testid="delete-endpoint"
            aria-label={`Delete ${endpoint.name}`}
            onClick={() => onDelete(endpoint)}
          >
            Delete
          </button>
        </div>
      )}
      {error !== null && (
        <div class="endpoint-error">
          <Alert error={error} />
        </div>
      )}
    </li>
  );
}

/** The team an endpoint belongs to, and the caller's role in it. */
export function TeamBadge({ name, role }: { name: string; role: Endpoint['role'] }) {
  return (
    <span
      class="badge badge-team"
      data-testid="endpoint-team"
      title={`Team ${name}; your role: ${ROLE_TEXT[role].label}`}
    >
      {name}
    </span>
  );
}
