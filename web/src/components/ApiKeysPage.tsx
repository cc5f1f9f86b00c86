import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { listApiKeys, revokeApiKey } from '../api/api-keys';
import { isAbortError } from '../api/errors';
import { expiryText, SCOPE_TEXT } from '../api-keys';
import { localTime } from '../format';
import { useDocumentTitle } from '../hooks';
import type { ApiKey, CreatedApiKey } from '../types';
import { Alert } from './Alert';
import { ApiKeyForm } from './ApiKeyForm';
import { ConfirmActionDialog } from './ConfirmActionDialog';
import { CopyButton } from './CopyButton';

/** The user's API keys, for scripts, CI and the hooktrail CLI: create one (shown once), list, revoke. */
export function ApiKeysPage() {
  useDocumentTitle('API keys');
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [toRevoke, setToRevoke] = useState<ApiKey | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    listApiKeys(controller.signal).then(setKeys, (error) => {
      if (!isAbortError(error)) setLoadError(error);
    });
    return () => controller.abort();
  }, []);

  const onCreated = (answer: CreatedApiKey) => {
    setCreated(answer);
    setKeys((list) => [answer.api_key, ...(list ?? [])]);
  };
  const onRevoked = (revoked: ApiKey) => {
    setKeys((list) => list?.filter((key) => key.id !== revoked.id) ?? null);
    setCreated((shown) => (shown?.api_key.id === revoked.id ? null : shown));
    setAnnouncement(`API key “${revoked.name}” revoked.`);
    setToRevoke(null);
  };
  const closeRevoke = useCallback(() => setToRevoke(null), []);
  const dismissKey = () => {
    setCreated(null);
    heading.current?.focus();
  };

  return (
    <div class="page">
      <div class="page-head">
        <h1 ref={heading} tabIndex={-1} data-autofocus>
          API keys
        </h1>
        <p class="muted">
          For scripts, CI and the <code>hooktrail</code> command-line client: send a key as{' '}
          <code>Authorization: Bearer htk_…</code>. It acts as you, within its scope.
        </p>
      </div>
      <ApiKeyForm onCreated={onCreated} />
      {created && <NewKeyNotice created={created} onDone={dismissKey} />}
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      <ApiKeyList keys={keys} error={loadError} onRevoke={setToRevoke} />
      <RevokeDialog apiKey={toRevoke} onRevoked={onRevoked} onCancel={closeRevoke} />
    </div>
  );
}

/** The new key, this once, with a copy button and the CLI's login command. */
function NewKeyNotice({ created, onDone }: { created: CreatedApiKey; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [created]);
  const login = `hooktrail login --url ${window.location.origin} --api-key ${created.key}`;
  return (
    <section class="card new-key" aria-labelledby="new-key-heading" data-testid="new-api-key">
      <h2 id="new-key-heading" ref={heading} tabIndex={-1}>
        Your new API key “{created.api_key.name}”
      </h2>
      <p class="alert alert-warning">
        Copy it now: it will not be shown again. Only a hash of it is kept; if you lose it, revoke it and
        create another.
      </p>
      <div class="code-block">
        <pre data-testid="new-api-key-value">{created.key}</pre>
        <CopyButton text={created.key} testId="copy-api-key" ariaLabel="Copy the API key" />
      </div>
      <p>Log the command-line client in with it:</p>
      <div class="code-block">
        <pre data-testid="cli-login-command">{login}</pre>
        <CopyButton text={login} testId="copy-cli-login" ariaLabel="Copy the login command" />
      </div>
      <button type="button" class="btn" data-testid="dismiss-api-key" onClick={onDone}>
        Done, I have copied it
      </button>
    </section>
  );
}

interface ListProps {
  keys: ApiKey[] | null;
  error: unknown;
  onRevoke: (key: ApiKey) => void;
}

function ApiKeyList({ keys, error, onRevoke }: ListProps) {
  return (
    <section aria-labelledby="api-keys-heading">
      <h2 id="api-keys-heading" class="section-title">
        Your API keys{keys ? ` (${keys.length})` : ''}
      </h2>
      <Alert error={error} />
      {!keys && !error && (
        <p class="muted" aria-busy="true">
          Loading API keys…
        </p>
      )}
      {keys?.length === 0 && (
        <div class="empty" data-testid="api-keys-empty">
          <p>
            <strong>No API keys yet.</strong> Create one above for a script, a CI job or the CLI.
          </p>
        </div>
      )}
      {keys && keys.length > 0 && (
        <ul class="api-key-list" data-testid="api-keys-list">
          {keys.map((key) => (
            <ApiKeyRow key={key.id} apiKey={key} onRevoke={onRevoke} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ApiKeyRow({ apiKey, onRevoke }: { apiKey: ApiKey; onRevoke: (key: ApiKey) => void }) {
  const { name, prefix, scope } = apiKey;
  return (
    <li class="api-key-row" data-testid="api-key-row" data-api-key-id={apiKey.id}>
      <div class="api-key-title">
        <strong class="api-key-name">{name}</strong>
        <code data-testid="api-key-prefix">{prefix}…</code>
        <span class="badge badge-scope" data-testid="api-key-scope" data-scope={scope}>
          {SCOPE_TEXT[scope].label}
        </span>
      </div>
      <dl class="facts facts-compact">
        <div>
          <dt>Created</dt>
          <dd>{localTime(apiKey.created_at)}</dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd data-testid="api-key-expires">{expiryText(apiKey)}</dd>
        </div>
        <div>
          <dt>Last used</dt>
          <dd data-testid="api-key-last-used">
            {apiKey.last_used_at === null ? 'never' : localTime(apiKey.last_used_at)}
          </dd>
        </div>
      </dl>
      <button
        type="button"
        class="btn btn-small btn-danger-outline"
        data-testid="revoke-api-key"
        aria-label={`Revoke ${name} (${prefix}…)`}
        onClick={() => onRevoke(apiKey)}
      >
        Revoke
      </button>
    </li>
  );
}

interface RevokeProps {
  apiKey: ApiKey | null;
  onRevoked: (key: ApiKey) => void;
  onCancel: () => void;
}

function RevokeDialog({ apiKey, onRevoked, onCancel }: RevokeProps) {
  return (
    <ConfirmActionDialog
      target={apiKey}
      title="Revoke this API key?"
      confirmLabel="Revoke key"
      confirmTestId="confirm-revoke"
      action={(key) => revokeApiKey(key.id)}
      onDone={onRevoked}
      onCancel={onCancel}
    >
      <p>
        <strong>{apiKey?.name}</strong> (<code>{apiKey?.prefix}…</code>) stops working at once: scripts, CI
        jobs and CLI logins that use it get 401. This cannot be undone.
      </p>
    </ConfirmActionDialog>
  );
}
