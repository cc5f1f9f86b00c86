import { useEffect, useRef, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { ApiError, isAbortError } from '../api/errors';
import { listIssues } from '../api/issues';
import { endpointStats } from '../api/stats';
import { localTime } from '../format';
import { type LiveChange, useDocumentTitle } from '../hooks';
import { announceIssuesChanged } from '../issues';
import { canWrite } from '../roles';
import { href } from '../router';
import type { Destination, DestinationStats, Endpoint, EndpointWithDestinations, Issue } from '../types';
import { Alert } from './Alert';
import { CopyButton } from './CopyButton';
import { Destinations } from './Destinations';
import { EndpointSettings } from './EndpointSettings';
import { EndpointStatsCard } from './EndpointStatsCard';
import { EventsList } from './EventsList';
import { IngestRules } from './IngestRules';
import { StatusBadge } from './StatusBadge';

/**
 * One endpoint: its capture URL, ingest rules, team and retention, destinations and live events. What
 * changes it is shown to members and above only (a viewer reads).
 */
export function EndpointPage({ id, params }: { id: string; params: URLSearchParams }) {
  const [endpoint, setEndpoint] = useState<EndpointWithDestinations | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [toggleError, setToggleError] = useState<unknown>(null);
  useDocumentTitle(endpoint?.name ?? 'Endpoint');
  const liveTick = useLiveTick();
  const { issues, recent, current } = useDestinationHealth(id, liveTick.value);

  useEffect(() => {
    const controller = new AbortController();
    setEndpoint(null);
    setError(null);
    api<{ endpoint: EndpointWithDestinations }>(endpointPath(id), { signal: controller.signal })
      .then(({ endpoint: loaded }) => setEndpoint(loaded))
      .catch((err) => {
        if (!isAbortError(err)) setError(err);
      });
    return () => controller.abort();
  }, [id]);

  /** An endpoint as PATCH answers it (without destinations, which the Destinations card keeps). */
  const applyUpdate = (updated: Endpoint) =>
    setEndpoint((current) =>
      current ? { ...current, ...updated, destinations: current.destinations } : current,
    );

  // Never rejects (a refusal is undone and shown through setToggleError): the toggle fires and forgets it.
  const toggleActive = async () => {
    if (!endpoint) return;
    const next = !endpoint.is_active;
    setToggleError(null);
    setEndpoint({ ...endpoint, is_active: next });
    try {
      const { endpoint: updated } = await api<{ endpoint: Endpoint }>(endpointPath(id), {
        method: 'PATCH',
        body: { is_active: next },
      });
      applyUpdate(updated);
    } catch (err) {
      setEndpoint((current) => (current ? { ...current, is_active: !next } : current));
      setToggleError(err);
    }
  };

  if (error) {
    const missing = error instanceof ApiError && error.status === 404;
    return (
      <div class="page">
        <Breadcrumbs />
        <h1 tabIndex={-1} data-autofocus>
          {missing ? 'Endpoint not found' : 'Could not load this endpoint'}
        </h1>
        {missing ? <p>It does not exist, or it was deleted.</p> : <Alert error={error} />}
        <p>
          <a href={href.endpoints()}>Back to your endpoints</a>
        </p>
      </div>
    );
  }

  if (!endpoint) {
    return (
      <div class="page">
        <Breadcrumbs />
        <p class="muted" aria-busy="true">
          Loading endpoint…
        </p>
      </div>
    );
  }

  const writable = canWrite(endpoint.role);
  return (
    <div class="page">
      <Breadcrumbs name={endpoint.name} />
      <div class="page-head page-head-row">
        <div>
          <h1 tabIndex={-1} data-autofocus>
            {endpoint.name}
          </h1>
          <p class="muted small">Created {localTime(endpoint.created_at)}</p>
        </div>
        <div class="head-actions">
          <StatusBadge status={endpoint.is_active ? 'active' : 'inactive'} />
          {writable && (
            <label class="switch" for="endpoint-active">
              <input
                id="endpoint-active"
                type="checkbox"
                role="switch"
                data-testid="endpoint-active-toggle"
                checked={endpoint.is_active}
                onChange={() => void toggleActive()}
              />
              <span>Accept webhooks</span>
            </label>
          )}
        </div>
      </div>
      <Alert error={toggleError} />

      <section class="card capture" aria-labelledby="capture-heading">
        <h2 id="capture-heading">Capture URL</h2>
        <div class="capture-row">
          <code class="url url-large" data-testid="capture-url">
            {endpoint.capture_url}
          </code>
          <CopyButton
            text={endpoint.capture_url}
            testId="copy-capture-url"
            ariaLabel="Copy capture URL"
            className="btn"
          />
        </div>
        <p class="hint">
          Send any HTTP request here (any method, headers and body): it is stored as an event, then forwarded
          to every active destination whose filter it matches.
        </p>
        {!endpoint.is_active && (
          <p class="alert alert-warning" role="note">
            This endpoint is inactive: its capture URL refuses new webhooks until “Accept webhooks” is turned
            back on.
          </p>
        )}
      </section>

      <IngestRules endpoint={endpoint} onSaved={applyUpdate} />

      <EndpointSettings endpoint={endpoint} onSaved={applyUpdate} />

      <Destinations
        endpointId={endpoint.id}
        writable={writable}
        initial={endpoint.destinations}
        issues={issues}
        recent={recent}
        current={current}
      />

      <EndpointStatsCard endpointId={endpoint.id} liveTick={liveTick.value} />

      <EventsList endpoint={endpoint} initialParams={params} onLiveChange={liveTick.onLiveChange} />
    </div>
  );
}

function Breadcrumbs({ name }: { name?: string }) {
  return (
    <nav class="breadcrumbs" aria-label="Breadcrumb">
      <ol>
        <li>
          <a href={href.endpoints()}>Endpoints</a>
        </li>
        {name && (
          <li>
            <span aria-current="page">{name}</span>
          </li>
        )}
      </ol>
    </nav>
  );
}

/** Live changes are gathered this long before the figures that depend on them are loaded again. */
const LIVE_SETTLE_MS = 1500;

/**
 * A number that goes up shortly after the live stream reports changes (at most once per LIVE_SETTLE_MS):
 * statistics and health depend on it. An updated event (a delivery failed or succeeded) may also have
 * opened or resolved an issue, which the header's count hears about.
 */
function useLiveTick(): { value: number; onLiveChange: (change: LiveChange) => void } {
  const [value, setValue] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);
  const onLiveChange = (change: LiveChange) => {
    if (change.type === 'event.updated') announceIssuesChanged();
    timer.current ??= setTimeout(() => {
      timer.current = undefined;
      setValue((n) => n + 1);
    }, LIVE_SETTLE_MS);
  };
  return { value, onLiveChange };
}

/**
 * What the destinations' health dots are drawn from: unresolved issues, the last hour's attempts, and the
 * destinations as they are now (a worker may have paused one, and backlogs move).
 */
function useDestinationHealth(
  endpointId: string,
  tick: number,
): { issues: Issue[]; recent: DestinationStats[]; current: Destination[] | null } {
  const [issues, setIssues] = useState<Issue[]>([]);
  const [recent, setRecent] = useState<DestinationStats[]>([]);
  const [current, setCurrent] = useState<Destination[] | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    const query = (status: Issue['status']) =>
      `status=${status}&endpoint_id=${encodeURIComponent(endpointId)}`;
    // Without them the dots fall back to paused/active only: a failure here is not worth an alert.
    Promise.all([listIssues(query('open'), signal), listIssues(query('acknowledged'), signal)]).then(
      ([open, acknowledged]) => setIssues([...open, ...acknowledged]),
      () => undefined,
    );
    endpointStats(endpointId, '1h', signal).then(
      (stats) => setRecent(stats.destinations),
      () => undefined,
    );
    // The page loaded them already: only live changes are worth asking again.
    if (tick > 0) {
      api<{ destinations: Destination[] }>(endpointPath(endpointId, 'destinations'), { signal }).then(
        ({ destinations }) => setCurrent(destinations),
        () => undefined,
      );
    }
    return () => controller.abort();
  }, [endpointId, tick]);
  return { issues, recent, current };
}
