import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { ApiError, errorMessages, isAbortError } from '../api/errors';
import { base64Size, formatBody, localTime, plural, shortId } from '../format';
import { useDocumentTitle, useEventStream } from '../hooks';
import { canWrite } from '../roles';
import { href } from '../router';
import type { Endpoint, EventWithDeliveries, ReplayResult } from '../types';
import { AiPanel } from './AiPanel';
import { Alert } from './Alert';
import { CopyButton } from './CopyButton';
import { Deliveries } from './Deliveries';
import { LiveIndicator } from './LiveIndicator';
import { Routing } from './Routing';
import { StatusBadge } from './StatusBadge';
import { VerificationBadge } from './VerificationBadge';

const POLL_MS = 2000;
/** After a replay, poll this long even before the new delivery shows up. */
const REPLAY_WATCH_MS = 15_000;
const BODY_PREVIEW_CHARS = 200_000;

/** One captured request: everything about it, its deliveries, replay and AI analysis. */
export function EventDetail({ endpointId, eventId }: { endpointId: string; eventId: string }) {
  const [event, setEvent] = useState<EventWithDeliveries | null>(null);
  const [endpoint, setEndpoint] = useState<Endpoint | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [replaying, setReplaying] = useState(false);
  const [replayResult, setReplayResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [watchUntil, setWatchUntil] = useState(0);
  const inFlight = useRef(false);
  const again = useRef(false);
  useDocumentTitle(event ? `${event.method} event ${shortId(event.id)}` : 'Event');

  const path = endpointPath(endpointId, 'events', eventId);

  const refresh = useCallback(
    async (signal?: AbortSignal) => {
      // One request at a time; a refresh asked for meanwhile runs right after (it may know newer state).
      if (inFlight.current) {
        again.current = true;
        return;
      }
      inFlight.current = true;
      try {
        do {
          again.current = false;
          const { event: loaded } = await api<{ event: EventWithDeliveries }>(path, { signal });
          if (signal?.aborted) return;
          setEvent(loaded);
          setError(null);
        } while (again.current);
      } catch (err) {
        if (!isAbortError(err)) setError(err);
      } finally {
        inFlight.current = false;
      }
    },
    [path],
  );

  useEffect(() => {
    const controller = new AbortController();
    setEvent(null);
    inFlight.current = false;
    again.current = false;
    void refresh(controller.signal);
    api<{ endpoint: Endpoint }>(endpointPath(endpointId), { signal: controller.signal })
      .then(({ endpoint: loaded }) => setEndpoint(loaded))
      .catch(() => undefined);
    return () => controller.abort();
  }, [endpointId, refresh]);

  const streamState = useEventStream(endpointId, ({ type, event: changed }) => {
    if (type === 'event.updated' && changed.id === eventId) void refresh();
  });

  // Poll while a delivery is still in progress (pending, or failed and retrying), and just after a replay.
  const busy = event?.deliveries.some((d) => d.status === 'pending' || d.status === 'failed') ?? false;
  useEffect(() => {
    if (!event) return;
    if (!busy && Date.now() > watchUntil) return;
    const timer = setTimeout(() => {
      if (document.visibilityState === 'visible') void refresh();
      else setEvent((current) => (current ? { ...current } : current)); // re-arm the timer
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [event, busy, watchUntil, refresh]);

  // Never rejects (failures are shown through setReplayResult), so the button fires and forgets it.
  const replay = async () => {
    setReplaying(true);
    setReplayResult(null);
    try {
      const result = await api<ReplayResult>(`${path}/replay`, { method: 'POST' });
      setReplayResult({
        ok: true,
        text: `Replay queued (job ${result.jobId}). Deliveries below update as it runs.`,
      });
      setWatchUntil(Date.now() + REPLAY_WATCH_MS);
      await refresh();
    } catch (err) {
      const text =
        err instanceof ApiError && err.status === 409
          ? `${errorMessages(err).join(' ')} Add, activate or change a filter of a destination on the endpoint page, then replay.`
          : errorMessages(err).join(' ');
      setReplayResult({ ok: false, text });
    } finally {
      setReplaying(false);
    }
  };

  const crumbs = (
    <nav class="breadcrumbs" aria-label="Breadcrumb">
      <ol>
        <li>
          <a href={href.endpoints()}>Endpoints</a>
        </li>
        <li>
          <a href={href.listOf(endpointId)}>{endpoint?.name ?? 'Endpoint'}</a>
        </li>
        <li>
          <span aria-current="page">Event {shortId(eventId)}</span>
        </li>
      </ol>
    </nav>
  );

  if (!event) {
    const missing = error instanceof ApiError && error.status === 404;
    return (
      <div class="page">
        {crumbs}
        {error ? (
          <>
            <h1 tabIndex={-1} data-autofocus>
              {missing ? 'Event not found' : 'Could not load this event'}
            </h1>
            {missing ? <p>It does not exist, or its endpoint was deleted.</p> : <Alert error={error} />}
            <p>
              <a href={href.listOf(endpointId)}>Back to the endpoint</a>
            </p>
          </>
        ) : (
          <p class="muted" aria-busy="true">
            Loading event…
          </p>
        )}
      </div>
    );
  }

  return (
    <div class="page" data-testid="event-detail" data-event-id={event.id}>
      {crumbs}
      <div class="page-head page-head-row">
        <div>
          <h1 tabIndex={-1} data-autofocus>
            <span class="method method-large">{event.method}</span> event{' '}
            <code class="id">{shortId(event.id)}</code>
          </h1>
          <p class="muted small">
            Full id <code>{event.id}</code>
          </p>
        </div>
        <div class="head-actions">
          <StatusBadge status={event.status} testId="event-status" />
          <LiveIndicator state={streamState} />
          {canWrite(endpoint?.role) && (
            <button
              type="button"
              class="btn btn-primary"
              data-testid="replay"
              onClick={() => void replay()}
              disabled={replaying}
            >
              {replaying ? 'Replaying…' : 'Replay'}
            </button>
          )}
        </div>
      </div>
      {replayResult && (
        <p
          class={`alert ${replayResult.ok ? 'alert-success' : 'alert-error'}`}
          role={replayResult.ok ? 'status' : 'alert'}
          data-testid="replay-result"
        >
          {replayResult.text}
        </p>
      )}
      {error !== null && <Alert error={error} />}

      <section class="card" aria-labelledby="request-heading">
        <h2 id="request-heading">Request</h2>
        <dl class="facts">
          <div>
            <dt>Method</dt>
            <dd data-testid="event-method">{event.method}</dd>
          </div>
          <div>
            <dt>Received</dt>
            <dd>
              <time dateTime={event.received_at}>{localTime(event.received_at)}</time>
              <br />
              <code class="small">{event.received_at}</code>
            </dd>
          </div>
          <div>
            <dt>Source IP</dt>
            <dd data-testid="event-source-ip">
              {event.source_ip || <span class="muted">not recorded</span>}
            </dd>
          </div>
          <div>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={event.status} />
            </dd>
          </div>
          <div>
            <dt>Signature</dt>
            <dd data-testid="event-verification" data-verification={event.verification.status}>
              {event.verification.status === 'none' ? (
                <span class="muted">Not checked</span>
              ) : (
                <VerificationBadge verification={event.verification} />
              )}
              {event.verification.reason && (
                <p class="small verification-reason" data-testid="event-verification-reason">
                  {event.verification.reason}
                </p>
              )}
            </dd>
          </div>
          {!!event.duplicate_count && (
            <div>
              <dt>Repeats</dt>
              <dd data-testid="event-duplicates">
                ×{event.duplicate_count} {event.duplicate_count === 1 ? 'repeat' : 'repeats'}
                <p class="hint">Answered with this event, not stored again.</p>
              </dd>
            </div>
          )}
        </dl>
        <QuerySection query={event.query} />
        <HeadersTable headers={event.headers} />
        <BodySection body={event.body} encoding={event.body_encoding} />
      </section>

      <Deliveries deliveries={event.deliveries} endpointId={endpointId} />

      <Routing endpointId={endpointId} eventId={event.id} />

      <AiPanel eventPath={path} eventStatus={event.status} />
    </div>
  );
}

function QuerySection({ query }: { query: string }) {
  const entries = query ? Array.from(new URLSearchParams(query).entries()) : [];
  return (
    <div class="subsection">
      <h3>Query string</h3>
      {query ? (
        <>
          <code class="block-code" data-testid="event-query">
            ?{query}
          </code>
          {entries.length > 0 && (
            <div class="table-wrap">
              <table class="kv">
                <caption class="sr-only">Query parameters</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  {entries.map(([name, value], i) => (
                    <tr key={`${name}-${i}`}>
                      <th scope="row">{name}</th>
                      <td>{value}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </>
      ) : (
        <p class="muted" data-testid="event-query">
          None
        </p>
      )}
    </div>
  );
}

function HeadersTable({ headers }: { headers: EventWithDeliveries['headers'] }) {
  const names = Object.keys(headers);
  return (
    <div class="subsection">
      <h3>Headers ({names.length})</h3>
      <div class="table-wrap">
        <table class="kv" data-testid="event-headers">
          <caption class="sr-only">Request headers</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {names.map((name) => {
              const value = headers[name];
              return (
                <tr key={name}>
                  <th scope="row">
                    <code>{name}</code>
                  </th>
                  <td>
                    {Array.isArray(value) ? (
                      value.map((v, i) => (
                        <div key={i}>
                          <code>{v}</code>
                        </div>
                      ))
                    ) : (
                      <code>{value}</code>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}

function BodySection({ body, encoding }: { body: string; encoding?: 'base64' }) {
  const [pretty, setPretty] = useState(true);
  const [full, setFull] = useState(false);
  const formatted = formatBody(body, encoding);
  const shown = pretty ? formatted.text : body;
  const truncated = !full && shown.length > BODY_PREVIEW_CHARS;
  return (
    <div class="subsection">
      <div class="subsection-head">
        <h3>Body</h3>
        <div class="toolbar">
          {formatted.json && (
            <button
              type="button"
              class="btn btn-small btn-ghost"
              aria-pressed={!pretty}
              onClick={() => setPretty(!pretty)}
            >
              {pretty ? 'Show raw' : 'Pretty-print'}
            </button>
          )}
          <CopyButton text={shown} testId="copy-body" ariaLabel="Copy body" />
        </div>
      </div>
      {encoding === 'base64' && (
        <p class="alert alert-info" data-testid="body-base64-note">
          This body is not valid UTF-8, so it is shown base64-encoded ({plural(base64Size(body), 'byte')}).
          Decode it to get the exact bytes that were sent.
        </p>
      )}
      {body === '' ? (
        <p class="muted" data-testid="event-body">
          Empty body
        </p>
      ) : (
        <pre
          class={`code${encoding === 'base64' ? ' wrap' : ''}`}
          data-testid="event-body"
          tabIndex={0}
          aria-label="Request body"
        >
          {truncated ? shown.slice(0, BODY_PREVIEW_CHARS) : shown}
        </pre>
      )}
      {truncated && (
        <button type="button" class="btn btn-small" onClick={() => setFull(true)}>
          Show the whole body ({plural(shown.length, 'character')})
        </button>
      )}
      {formatted.json && pretty && (
        <p class="hint">JSON, pretty-printed. “Show raw” shows it exactly as sent.</p>
      )}
    </div>
  );
}
