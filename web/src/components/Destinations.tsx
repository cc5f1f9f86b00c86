import { useState } from 'preact/hooks';
import { api, endpointPath } from '../api';
import { localTime, plural } from '../format';
import type { Destination } from '../types';
import { Alert } from './Alert';
import { CopyButton } from './CopyButton';

interface Props {
  endpointId: string;
  initial: Destination[];
}

/** Where the endpoint's events are forwarded: add, remove, (de)activate, and show secrets on demand. */
export function Destinations({ endpointId, initial }: Props) {
  const [destinations, setDestinations] = useState<Destination[]>(initial);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [adding, setAdding] = useState(false);
  const [addError, setAddError] = useState<unknown>(null);
  const [announcement, setAnnouncement] = useState('');

  const add = async (event: Event) => {
    event.preventDefault();
    setAdding(true);
    setAddError(null);
    try {
      const body: { url: string; secret?: string } = { url: url.trim() };
      if (secret) body.secret = secret;
      const { destination } = await api<{ destination: Destination }>(
        endpointPath(endpointId, 'destinations'),
        { method: 'POST', body },
      );
      setDestinations((list) => [...list.filter((d) => d.id !== destination.id), destination]);
      setUrl('');
      setSecret('');
      setAnnouncement(`Destination ${destination.url} added.`);
    } catch (error) {
      setAddError(error);
    } finally {
      setAdding(false);
    }
  };

  const replace = (updated: Destination) =>
    setDestinations((list) => list.map((d) => (d.id === updated.id ? updated : d)));
  const remove = (removed: Destination) => {
    setDestinations((list) => list.filter((d) => d.id !== removed.id));
    setAnnouncement(`Destination ${removed.url} removed.`);
  };

  const activeCount = destinations.filter((d) => d.is_active).length;
  return (
    <section class="card" aria-labelledby="destinations-heading">
      <div class="card-head">
        <h2 id="destinations-heading">Destinations</h2>
        <span class="muted small">
          {destinations.length === 0
            ? 'None yet: events are stored but not forwarded.'
            : `${activeCount} of ${destinations.length} active`}
        </span>
      </div>
      {destinations.length > 0 && (
        <ul class="destination-list" data-testid="destinations-list">
          {destinations.map((destination) => (
            <DestinationRow
              key={destination.id}
              endpointId={endpointId}
              destination={destination}
              onChange={replace}
              onRemoved={remove}
            />
          ))}
        </ul>
      )}
      <form class="destination-form" onSubmit={add} aria-label="Add a destination">
        <div class="field grow">
          <label for="destination-url">Destination URL</label>
          <input
            id="destination-url"
            data-testid="destination-url"
            type="url"
            inputMode="url"
            required
            placeholder="https://example.com/webhooks"
            aria-describedby="destination-url-hint"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
          <p id="destination-url-hint" class="hint">
            Must be an HTTPS URL.
          </p>
        </div>
        <div class="field">
          <label for="destination-secret">
            Signing secret <span class="muted">(optional)</span>
          </label>
          <input
            id="destination-secret"
            data-testid="destination-secret"
            type="password"
            autoComplete="off"
            spellcheck={false}
            aria-describedby="destination-secret-hint"
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
          <p id="destination-secret-hint" class="hint">
            Forwarded requests are then signed (hooktrail-signature).
          </p>
        </div>
        <button type="submit" class="btn btn-primary" data-testid="add-destination" disabled={adding}>
          {adding ? 'Adding…' : 'Add destination'}
        </button>
      </form>
      <Alert error={addError} />
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
    </section>
  );
}

interface RowProps {
  endpointId: string;
  destination: Destination;
  onChange: (destination: Destination) => void;
  onRemoved: (destination: Destination) => void;
}

function DestinationRow({ endpointId, destination, onChange, onRemoved }: RowProps) {
  const [revealed, setRevealed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const path = endpointPath(endpointId, 'destinations', destination.id);

  const toggle = async () => {
    const next = !destination.is_active;
    setError(null);
    onChange({ ...destination, is_active: next });
    try {
      const { destination: updated } = await api<{ destination: Destination }>(path, {
        method: 'PATCH',
        body: { is_active: next },
      });
      onChange(updated);
    } catch (err) {
      onChange({ ...destination, is_active: !next });
      setError(err);
    }
  };

  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await api<{ ok: boolean }>(path, { method: 'DELETE' });
      onRemoved(destination);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const toggleId = `dest-active-${destination.id}`;
  return (
    <li class="destination-row" data-testid="destination-row" data-destination-id={destination.id}>
      <div class="destination-main">
        <code class="url" data-testid="destination-row-url">
          {destination.url}
        </code>
        <div class="secret">
          <span class="muted small">Secret:</span>{' '}
          {destination.secret === null ? (
            <span class="muted small">none (requests are not signed)</span>
          ) : (
            <>
              <code data-testid="destination-secret-value">
                {revealed ? (
                  destination.secret
                ) : (
                  <>
                    <span aria-hidden="true">••••••••</span>
                    <span class="sr-only">hidden</span>
                  </>
                )}
              </code>
              <button
                type="button"
                class="btn btn-small btn-ghost"
                data-testid="reveal-secret"
                aria-pressed={revealed}
                aria-label={revealed ? 'Hide secret' : 'Reveal secret'}
                onClick={() => setRevealed(!revealed)}
              >
                {revealed ? 'Hide' : 'Reveal'}
              </button>
              <CopyButton
                text={destination.secret}
                testId="copy-secret"
                ariaLabel={`Copy secret of ${destination.url}`}
                className="btn btn-small btn-ghost"
              />
            </>
          )}
        </div>
        <p
          class="backlog muted small"
          data-testid="destination-backlog"
          data-pending={destination.backlog.pending}
        >
          {destination.backlog.pending === 0
            ? 'Nothing waiting'
            : `${plural(destination.backlog.pending, 'delivery', 'deliveries')} waiting, the oldest since ${localTime(destination.backlog.oldest_pending_at)}`}
        </p>
      </div>
      <div class="destination-actions">
        <label class="switch" for={toggleId}>
          <input
            id={toggleId}
            type="checkbox"
            role="switch"
            data-testid="destination-active-toggle"
            aria-label={`Active: ${destination.url}`}
            checked={destination.is_active}
            onChange={toggle}
          />
          <span>Active</span>
        </label>
        <button
          type="button"
          class="btn btn-small btn-danger-outline"
          data-testid="remove-destination"
          aria-label={`Remove destination ${destination.url}`}
          onClick={remove}
          disabled={busy}
        >
          {busy ? 'Removing…' : 'Remove'}
        </button>
      </div>
      {error !== null && (
        <div class="row-error">
          <Alert error={error} />
        </div>
      )}
    </li>
  );
}
