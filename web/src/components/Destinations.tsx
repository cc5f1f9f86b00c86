import { useEffect, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { destinationHealth } from '../destination-health';
import { localTime, plural } from '../format';
import type { Destination, DestinationStats, FilterRule, Issue } from '../types';
import { Alert } from './Alert';
import { CopyButton } from './CopyButton';
import { FilterField, parseFilter } from './FilterField';

interface Props {
  endpointId: string;
  /** The caller may change them (a member or above): without it, the list is read-only. */
  writable: boolean;
  initial: Destination[];
  /** The endpoint's unresolved issues and its destinations' statistics of the last hour (health dots). */
  issues: readonly Issue[];
  recent: readonly DestinationStats[];
  /** The destinations as loaded again after live changes: what workers change (pause, backlog) follows. */
  current: readonly Destination[] | null;
}

/**
 * Where the endpoint's events are forwarded: add, remove, (de)activate, limit, filter, and show secrets
 * on demand. The API answers a secret only to who may change the destination: a viewer is told whether
 * one is set, with nothing to reveal or copy.
 */
export function Destinations({ endpointId, writable, initial, issues, recent, current }: Props) {
  const [destinations, setDestinations] = useState<Destination[]>(initial);

  useEffect(() => {
    if (!current) return;
    setDestinations((list) =>
      list.map((destination) => {
        const now = current.find((candidate) => candidate.id === destination.id);
        return now
          ? { ...destination, paused: now.paused, paused_reason: now.paused_reason, backlog: now.backlog }
          : destination;
      }),
    );
  }, [current]);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [adding, setAdding] = useState(false);
  const [addError, setAddError] = useState<unknown>(null);
  const [announcement, setAnnouncement] = useState('');

  // Never rejects (failures are shown through setAddError), so the form fires and forgets it.
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
              writable={writable}
              issues={issues}
              recent={recent.find((stats) => stats.id === destination.id)}
              onChange={replace}
              onRemoved={remove}
            />
          ))}
        </ul>
      )}
      {writable && (
        <form class="destination-form" onSubmit={(event) => void add(event)} aria-label="Add a destination">
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
      )}
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
  writable: boolean;
  issues: readonly Issue[];
  recent: DestinationStats | undefined;
  onChange: (destination: Destination) => void;
  onRemoved: (destination: Destination) => void;
}

function DestinationRow({
  endpointId,
  destination,
  writable,
  issues,
  recent,
  onChange,
  onRemoved,
}: RowProps) {
  const [revealed, setRevealed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const path = endpointPath(endpointId, 'destinations', destination.id);

  /**
   * Sends `changes`, showing them at once and going back if the server refuses them. Never rejects
   * (a refusal is shown through setError and resolves to false), so handlers may fire and forget it.
   */
  const patch = async (changes: Partial<Destination>): Promise<boolean> => {
    setError(null);
    onChange({ ...destination, ...changes });
    try {
      const { destination: updated } = await api<{ destination: Destination }>(path, {
        method: 'PATCH',
        body: changes,
      });
      onChange(updated);
      return true;
    } catch (err) {
      onChange(destination);
      setError(err);
      return false;
    }
  };

  // Never rejects (failures are shown through setError), so the button fires and forgets it.
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
  const health = destinationHealth(destination, issues, recent);
  return (
    <li
      class="destination-row"
      data-testid="destination-row"
      data-destination-id={destination.id}
      data-paused={destination.paused}
    >
      <div class="destination-main">
        <span
          class="health-dot"
          data-testid="destination-health"
          data-level={health.level}
          role="img"
          aria-label={health.text}
          title={health.text}
        />{' '}
        <code class="url" data-testid="destination-row-url">
          {destination.url}
        </code>
        {destination.paused && (
          <span
            class="badge badge-paused"
            data-testid="destination-paused"
            title={destination.paused_reason ?? 'Paused by hand'}
          >
            Paused: deliveries held
          </span>
        )}
        {destination.ordering === 'fifo' && (
          <span class="badge" data-testid="destination-fifo" title="One attempt at a time, in capture order">
            FIFO
          </span>
        )}
        <div class="secret">
          <span class="muted small">Secret:</span>{' '}
          {destination.secret === null ? (
            <span
              class="muted small"
              data-testid="destination-secret-state"
              data-set={destination.secret_set}
            >
              {destination.secret_set
                ? 'set (requests are signed; hidden for your role)'
                : 'none (requests are not signed)'}
            </span>
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
        {destination.paused && destination.paused_reason && (
          <p class="paused-reason small" data-testid="destination-paused-reason">
            {destination.paused_reason}. Resume to send what is waiting.
          </p>
        )}
        <FlowLimits destination={destination} onSave={writable ? patch : null} />
        <DestinationFilter destination={destination} onSave={writable ? patch : null} />
      </div>
      {writable && (
        <div class="destination-actions">
          <label class="switch" for={toggleId}>
            <input
              id={toggleId}
              type="checkbox"
              role="switch"
              data-testid="destination-active-toggle"
              aria-label={`Active: ${destination.url}`}
              checked={destination.is_active}
              onChange={() => void patch({ is_active: !destination.is_active })}
            />
            <span>Active</span>
          </label>
          <button
            type="button"
            class="btn btn-small btn-ghost"
            data-testid="destination-pause-toggle"
            aria-pressed={destination.paused}
            aria-label={`${destination.paused ? 'Resume' : 'Pause'} deliveries to ${destination.url}`}
            onClick={() => void patch({ paused: !destination.paused })}
          >
            {destination.paused ? 'Resume' : 'Pause'}
          </button>
          <button
            type="button"
            class="btn btn-small btn-danger-outline"
            data-testid="remove-destination"
            aria-label={`Remove destination ${destination.url}`}
            onClick={() => void remove()}
            disabled={busy}
          >
            {busy ? 'Removing…' : 'Remove'}
          </button>
        </div>
      )}
      {error !== null && (
        <div class="row-error">
          <Alert error={error} />
        </div>
      )}
    </li>
  );
}

/** "50 per second, 5 at once", or the defaults in words. */
function describeLimits(destination: Destination): string {
  const rate =
    destination.rate_limit === null
      ? 'no rate limit'
      : `at most ${destination.rate_limit} per ${destination.rate_limit_period}`;
  const inFlight =
    destination.ordering === 'fifo'
      ? 'one at a time, in order (FIFO)'
      : destination.max_in_flight === null
        ? 'a fair share at once'
        : `${destination.max_in_flight} at once`;
  const autoPause =
    destination.auto_pause_after == null
      ? 'never paused by itself'
      : `paused after ${plural(destination.auto_pause_after, 'failed attempt')} in a row`;
  return `Limits: ${rate}, ${inFlight}; ${autoPause}`;
}

interface SettingProps {
  destination: Destination;
  /**
   * Sends the changes; false when the server refused them (the row shows why). Null when the caller may
   * not change the destination: the setting is shown, not its edit buttons.
   */
  onSave: ((changes: Partial<Destination>) => Promise<boolean>) | null;
}

/** The destination's rate limit, max in flight and ordering, shown in words and edited in place. */
function FlowLimits({ destination, onSave }: SettingProps) {
  const [editing, setEditing] = useState(false);
  const [rate, setRate] = useState('');
  const [period, setPeriod] = useState<Destination['rate_limit_period']>('second');
  const [inFlight, setInFlight] = useState('');
  const [ordering, setOrdering] = useState<Destination['ordering']>('none');
  const [autoPause, setAutoPause] = useState('');
  const id = destination.id;

  const open = () => {
    setRate(destination.rate_limit?.toString() ?? '');
    setPeriod(destination.rate_limit_period);
    setInFlight(destination.max_in_flight?.toString() ?? '');
    setOrdering(destination.ordering);
    setAutoPause(destination.auto_pause_after?.toString() ?? '');
    setEditing(true);
  };
  const save = async (event: Event) => {
    event.preventDefault();
    if (!onSave) return;
    const saved = await onSave({
      rate_limit: rate.trim() === '' ? null : Number(rate),
      rate_limit_period: period,
      max_in_flight: inFlight.trim() === '' ? null : Number(inFlight),
      ordering,
      auto_pause_after: autoPause.trim() === '' ? null : Number(autoPause),
    });
    if (saved) setEditing(false);
  };

  if (!editing || !onSave)
    return (
      <p class="limits muted small" data-testid="destination-limits">
        {describeLimits(destination)}{' '}
        {onSave && (
          <button type="button" class="btn btn-small btn-ghost" data-testid="edit-limits" onClick={open}>
            Edit limits
          </button>
        )}
      </p>
    );
  return (
    <form
      class="limits-form"
      onSubmit={(event) => void save(event)}
      aria-label={`Limits of ${destination.url}`}
    >
      <LimitInput
        id={`rate-${id}`}
        testId="rate-limit"
        label="Rate limit"
        max={100000}
        placeholder="none"
        value={rate}
        onInput={setRate}
      />
      <div class="field">
        <label for={`period-${id}`}>per</label>
        <select
          id={`period-${id}`}
          data-testid="rate-limit-period"
          value={period}
          onChange={(e) => setPeriod(e.currentTarget.value as Destination['rate_limit_period'])}
        >
          <option value="second">second</option>
          <option value="minute">minute</option>
        </select>
      </div>
      <LimitInput
        id={`in-flight-${id}`}
        testId="max-in-flight"
        label="At once"
        max={1000}
        placeholder="fair share"
        value={inFlight}
        onInput={setInFlight}
      />
      <div class="field">
        <label for={`ordering-${id}`}>Order</label>
        <select
          id={`ordering-${id}`}
          data-testid="ordering"
          value={ordering}
          onChange={(e) => setOrdering(e.currentTarget.value as Destination['ordering'])}
        >
          <option value="none">none (in parallel)</option>
          <option value="fifo">FIFO (one at a time)</option>
        </select>
      </div>
      <LimitInput
        id={`auto-pause-${id}`}
        testId="auto-pause-after"
        label="Pause after failures in a row"
        max={10000}
        placeholder="never"
        value={autoPause}
        onInput={setAutoPause}
      />
      <button type="submit" class="btn btn-small btn-primary" data-testid="save-limits">
        Save limits
      </button>
      <button type="button" class="btn btn-small btn-ghost" onClick={() => setEditing(false)}>
        Cancel
      </button>
    </form>
  );
}

/** Which events the destination gets: its filter shown as JSON, edited in place or removed. */
function DestinationFilter({ destination, onSave }: SettingProps) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const { filter, url } = destination;

  const open = () => {
    setText(filter === null ? '' : JSON.stringify(filter, null, 2));
    setInvalid(null);
    setEditing(true);
  };
  const saveFilter = async (next: FilterRule | null) => {
    if (onSave && (await onSave({ filter: next }))) setEditing(false);
  };
  const submit = (event: Event) => {
    event.preventDefault();
    const parsed = parseFilter(text);
    setInvalid('error' in parsed ? parsed.error : null);
    if ('filter' in parsed) void saveFilter(parsed.filter);
  };

  if (!editing || !onSave)
    return (
      <p class="filter-summary muted small" data-testid="destination-filter" data-filtered={filter !== null}>
        Filter:{' '}
        {filter === null ? (
          'none (every event)'
        ) : (
          <code data-testid="destination-filter-rule">{JSON.stringify(filter)}</code>
        )}{' '}
        {onSave && (
          <button
            type="button"
            class="btn btn-small btn-ghost"
            data-testid="edit-filter"
            aria-label={`Edit filter of ${url}`}
            onClick={open}
          >
            Edit filter
          </button>
        )}
        {onSave && filter !== null && (
          <button
            type="button"
            class="btn btn-small btn-ghost"
            data-testid="remove-filter"
            aria-label={`Remove filter of ${url}`}
            onClick={() => void saveFilter(null)}
          >
            Remove filter
          </button>
        )}
      </p>
    );
  return (
    <form class="filter-form" onSubmit={submit} aria-label={`Filter of ${url}`}>
      <FilterField id={`filter-${destination.id}`} label="Filter (JSON)" value={text} onInput={setText} />
      <Alert error={invalid} />
      <div class="toolbar">
        <button type="submit" class="btn btn-small btn-primary" data-testid="save-filter">
          Save filter
        </button>
        <button type="button" class="btn btn-small btn-ghost" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface LimitInputProps {
  id: string;
  testId: string;
  label: string;
  max: number;
  /** Shown while empty: what no limit means. */
  placeholder: string;
  value: string;
  onInput: (value: string) => void;
}

/** A limit from 1 to `max`; empty for none. */
function LimitInput({ id, testId, label, max, placeholder, value, onInput }: LimitInputProps) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        id={id}
        data-testid={testId}
        type="number"
        min={1}
        max={max}
        placeholder={placeholder}
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    </div>
  );
}
