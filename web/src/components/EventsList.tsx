import { useEffect, useRef, useState } from 'preact/hooks';
import { api, endpointPath } from '../api/client';
import { isAbortError } from '../api/errors';
import { isoToLocalInput, localInputToIso, localTime, plural, preview } from '../format';
import { type LiveChange, useEventStream } from '../hooks';
import { canWrite } from '../roles';
import { href, rememberListQuery, replaceHash } from '../router';
import type { Endpoint, EventFilters, EventSummary, EventVerification, Pagination } from '../types';
import { EVENT_STATUSES, VERIFICATION_STATUSES } from '../types';
import { Alert } from './Alert';
import { BulkReplayBar } from './BulkReplayBar';
import { CopyButton } from './CopyButton';
import { LiveIndicator } from './LiveIndicator';
import { StatusBadge, statusLabel } from './StatusBadge';
import { VerificationBadge } from './VerificationBadge';

const DEFAULT_LIMIT = 50;
const SEARCH_DEBOUNCE_MS = 300;
const FRESH_MS = 4000;
/** Under a status filter, live status changes have the matching events counted again at most this often. */
const RECOUNT_MS = 1000;
const SIGNATURE_LABELS: Record<EventVerification['status'], string> = {
  failed: 'Failed',
  verified: 'Verified',
  none: 'Unchecked',
};

interface Filters extends EventFilters {
  limit: number;
}

interface ListData {
  /** The page as loaded, and the events the live stream added to it since. */
  events: EventSummary[];
  pagination: Pagination;
}

function filtersFromParams(params: URLSearchParams): Filters {
  const status = params.get('status') ?? '';
  const verification = params.get('verification') ?? '';
  const page = Number(params.get('page'));
  const limit = Number(params.get('limit'));
  const from = params.get('from') ?? '';
  return {
    status: (EVENT_STATUSES as readonly string[]).includes(status) ? status : '',
    verification: (VERIFICATION_STATUSES as readonly string[]).includes(verification) ? verification : '',
    from: from && !Number.isNaN(Date.parse(from)) ? from : '',
    q: params.get('q') ?? '',
    page: Number.isInteger(page) && page > 0 ? page : 1,
    limit: Number.isInteger(limit) && limit > 0 && limit <= 100 ? limit : DEFAULT_LIMIT,
  };
}

function hasFilter(f: Filters): boolean {
  return f.status !== '' || f.verification !== '' || f.from !== '' || f.q !== '';
}

/** The API query (and the hash query) of the filters; defaults left out of the hash. */
function toQuery(f: Filters, forApi: boolean): string {
  const params = new URLSearchParams();
  if (f.status) params.set('status', f.status);
  if (f.verification) params.set('verification', f.verification);
  if (f.from) params.set('from', f.from);
  if (f.q) params.set('q', f.q);
  if (forApi || f.page !== 1) params.set('page', String(f.page));
  if (forApi || f.limit !== DEFAULT_LIMIT) params.set('limit', String(f.limit));
  return params.toString();
}

/** Whether a newly created event belongs on the current view (page 1 with these filters). */
function matches(event: EventSummary, f: Filters): boolean {
  if (f.status && event.status !== f.status) return false;
  if (f.verification && event.verification?.status !== f.verification) return false;
  if (f.from && event.received_at && Date.parse(event.received_at) < Date.parse(f.from)) return false;
  if (f.q) {
    // The API searches the body case-insensitively; without the body in the message we cannot tell.
    if (typeof event.body !== 'string' || event.body_encoding === 'base64') return false;
    if (!event.body.toLowerCase().includes(f.q.toLowerCase())) return false;
  }
  return true;
}

function insertEvent(data: ListData, event: EventSummary): ListData {
  if (data.events.some((e) => e.id === event.id)) return data;
  const { limit } = data.pagination;
  const total = data.pagination.total + 1;
  const events = [event, ...data.events]
    .sort((a, b) => (b.received_at ?? '').localeCompare(a.received_at ?? ''))
    .slice(0, limit);
  return { events, pagination: { ...data.pagination, total, pages: Math.ceil(total / limit) } };
}

/** The endpoint's events: filters, pagination, and live updates from the stream. */
export function EventsList({
  endpoint,
  initialParams,
  onLiveChange,
}: {
  endpoint: Endpoint;
  initialParams: URLSearchParams;
  /** Told of every live change too (the page's statistics and health follow them). */
  onLiveChange?: (change: LiveChange) => void;
}) {
  const [filters, setFilters] = useState<Filters>(() => filtersFromParams(initialParams));
  const [qInput, setQInput] = useState(filters.q);
  const [data, setData] = useState<ListData | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const [newCount, setNewCount] = useState(0);
  const [fresh, setFresh] = useState<ReadonlySet<string>>(new Set());
  const [announcement, setAnnouncement] = useState('');

  const filtersRef = useRef(filters);
  filtersRef.current = filters;
  const loadingRef = useRef(true);
  /** Created events that arrived while a page-1 load was in flight. */
  const pendingCreated = useRef<EventSummary[]>([]);
  /** Latest live update per event id, with when it arrived (applied to loads started before it). */
  const updates = useRef(new Map<string, { event: EventSummary; at: number }>());
  const searchTimer = useRef<ReturnType<typeof setTimeout>>();
  /** Bumped (at most every RECOUNT_MS) when events change status under a status filter. */
  const [statusMoves, setStatusMoves] = useState(0);
  const recountTimer = useRef<ReturnType<typeof setTimeout>>();
  const freshTimers = useRef<ReturnType<typeof setTimeout>[]>([]);

  // The hash changed under us (back/forward, a link, an edited address): follow its filters.
  const mounted = useRef(false);
  useEffect(() => {
    if (!mounted.current) {
      mounted.current = true;
      return;
    }
    const next = filtersFromParams(initialParams);
    if (toQuery(next, false) !== toQuery(filtersRef.current, false)) {
      clearTimeout(searchTimer.current);
      setQInput(next.q);
      setFilters(next);
    }
  }, [initialParams]);

  useEffect(
    () => () => {
      clearTimeout(searchTimer.current);
      clearTimeout(recountTimer.current);
      freshTimers.current.forEach(clearTimeout);
    },
    [],
  );

  /**
   * A created event with the last update that came for it: its status may have moved on before it was
   * listed (held during a load, or its update published by a worker before the API's creation arrived).
   */
  const withLatestUpdate = (event: EventSummary): EventSummary => {
    const update = updates.current.get(event.id);
    return update ? { ...event, ...update.event } : event;
  };

  // Load the page whenever the filters change; keep them in the hash (no history entry).
  useEffect(() => {
    const controller = new AbortController();
    const startedAt = performance.now();
    loadingRef.current = true;
    pendingCreated.current = [];
    setLoading(true);
    const query = toQuery(filters, false);
    rememberListQuery(endpoint.id, query);
    replaceHash(href.listOf(endpoint.id));
    api<ListData>(`${endpointPath(endpoint.id, 'events')}?${toQuery(filters, true)}`, {
      signal: controller.signal,
    })
      .then((loaded) => {
        const events = loaded.events.map((event) => {
          const update = updates.current.get(event.id);
          return update && update.at >= startedAt ? { ...event, ...update.event } : event;
        });
        let next: ListData = { events, pagination: loaded.pagination };
        if (filters.page === 1) {
          for (const event of pendingCreated.current)
            if (matches(event, filters)) next = insertEvent(next, withLatestUpdate(event));
        }
        pendingCreated.current = [];
        setData(next);
        setError(null);
        if (filters.page === 1 && !hasFilter(filters)) setNewCount(0);
        // Past the last page: back to it (not with a capped search count, whose later pages still answer).
        const { pages, total_capped: capped } = loaded.pagination;
        if (!capped && pages > 0 && filters.page > pages) {
          setFilters({ ...filters, page: pages });
        }
      })
      .catch((err) => {
        if (!isAbortError(err)) setError(err);
      })
      .finally(() => {
        if (!controller.signal.aborted) {
          loadingRef.current = false;
          setLoading(false);
        }
      });
    return () => controller.abort();
  }, [endpoint.id, filters]);

  const markFresh = (id: string) => {
    setFresh((set) => new Set(set).add(id));
    freshTimers.current.push(
      setTimeout(() => {
        setFresh((set) => {
          const next = new Set(set);
          next.delete(id);
          return next;
        });
      }, FRESH_MS),
    );
  };

  const onChange = (change: LiveChange) => {
    onLiveChange?.(change);
    const { type, event } = change;
    if (type === 'event.updated') {
      // The rows stay where they are, with their new status; the events the filter matches are counted again.
      if (filtersRef.current.status && event.status && recountTimer.current === undefined)
        recountTimer.current = setTimeout(() => {
          recountTimer.current = undefined;
          setStatusMoves((n) => n + 1);
        }, RECOUNT_MS);
      updates.current.set(event.id, { event, at: performance.now() });
      if (updates.current.size > 1000) updates.current.delete(updates.current.keys().next().value as string);
      setData((current) =>
        current && current.events.some((e) => e.id === event.id)
          ? { ...current, events: current.events.map((e) => (e.id === event.id ? { ...e, ...event } : e)) }
          : current,
      );
      return;
    }
    const f = filtersRef.current;
    if (f.page === 1 && matches(event, f)) {
      if (loadingRef.current) {
        pendingCreated.current.push(event);
        return;
      }
      setData((current) => (current ? insertEvent(current, withLatestUpdate(event)) : current));
      markFresh(event.id);
      setAnnouncement(`New ${event.method ?? ''} event received.`);
    } else {
      setNewCount((n) => n + 1);
    }
  };

  const streamState = useEventStream(endpoint.id, onChange);

  const update = (patch: Partial<Filters>) => setFilters((f) => ({ ...f, page: 1, ...patch }));

  const onSearch = (value: string) => {
    setQInput(value);
    clearTimeout(searchTimer.current);
    searchTimer.current = setTimeout(() => update({ q: value.trim() }), SEARCH_DEBOUNCE_MS);
  };

  const clearFilters = () => {
    clearTimeout(searchTimer.current);
    setQInput('');
    setFilters((f) => ({ ...f, status: '', verification: '', from: '', q: '', page: 1 }));
  };

  const showNew = () => {
    setNewCount(0);
    clearFilters();
  };

  const pagination = data?.pagination;
  const pages = Math.max(pagination?.pages ?? 1, 1);
  // A capped search count does not say where the matches end: a page that is not full does.
  const lastPage = pagination?.total_capped
    ? (data?.events.length ?? 0) < pagination.limit
    : filters.page >= pages;
  const filtered = hasFilter(filters);
  const empty = data !== null && data.events.length === 0;

  return (
    <section class="card events" aria-labelledby="events-heading">
      <div class="card-head">
        <h2 id="events-heading">Events</h2>
        <LiveIndicator state={streamState} />
      </div>

      <form class="filters" role="search" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="filter-status">Status</label>
          <select
            id="filter-status"
            data-testid="filter-status"
            value={filters.status}
            onChange={(e) => update({ status: e.currentTarget.value })}
          >
            <option value="">All statuses</option>
            {EVENT_STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-verification">Signature</label>
          <select
            id="filter-verification"
            data-testid="filter-verification"
            value={filters.verification}
            onChange={(e) => update({ verification: e.currentTarget.value })}
          >
            <option value="">Any</option>
            {VERIFICATION_STATUSES.map((v) => (
              <option key={v} value={v}>
                {SIGNATURE_LABELS[v]}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="filter-from">Received from</label>
          <input
            id="filter-from"
            data-testid="filter-from"
            type="datetime-local"
            value={isoToLocalInput(filters.from)}
            onChange={(e) => update({ from: localInputToIso(e.currentTarget.value) })}
          />
        </div>
        <div class="field grow">
          <label for="filter-q">Search in body</label>
          <input
            id="filter-q"
            data-testid="filter-q"
            type="search"
            maxLength={500}
            placeholder="e.g. invoice.paid"
            value={qInput}
            onInput={(e) => onSearch(e.currentTarget.value)}
          />
        </div>
        {filtered && (
          <button type="button" class="btn" data-testid="clear-filters" onClick={clearFilters}>
            Clear filters
          </button>
        )}
      </form>

      {canWrite(endpoint.role) && (
        <BulkReplayBar
          endpointId={endpoint.id}
          status={filters.status}
          from={filters.from}
          q={filters.q}
          listed={data?.pagination.total}
          statusMoves={statusMoves}
          bySignature={filters.verification !== ''}
        />
      )}

      {newCount > 0 && (
        <div class="banner" role="status" data-testid="new-events-banner">
          <span>
            {plural(newCount, 'new event')} <span aria-hidden="true">—</span>
          </span>
          <button type="button" class="link-button" data-testid="show-new-events" onClick={showNew}>
            show
          </button>
        </div>
      )}

      <Alert error={error} />
      <p class="sr-only" aria-live="polite">
        {announcement}
      </p>

      {empty && !filtered && filters.page === 1 && <EmptyState endpoint={endpoint} />}
      {empty && (filtered || filters.page > 1) && (
        <div class="empty" data-testid="events-no-match">
          <p>No events match these filters.</p>
          <button type="button" class="btn" onClick={clearFilters}>
            Clear filters
          </button>
        </div>
      )}
      {!data && loading && (
        <p class="muted" aria-busy="true">
          Loading events…
        </p>
      )}

      <ul
        class={`event-list${loading && data ? ' is-loading' : ''}`}
        data-testid="events-list"
        aria-label="Events, newest first"
        aria-busy={loading}
      >
        {data?.events.map((event) => (
          <EventRow key={event.id} endpointId={endpoint.id} event={event} fresh={fresh.has(event.id)} />
        ))}
      </ul>

      {pagination && (pagination.total > 0 || filters.page > 1) && (
        <nav class="pagination" aria-label="Event pages">
          <button
            type="button"
            class="btn"
            data-testid="page-prev"
            disabled={filters.page <= 1 || loading}
            onClick={() => setFilters((f) => ({ ...f, page: Math.max(1, f.page - 1) }))}
          >
            <span aria-hidden="true">←</span> Previous
          </button>
          <span data-testid="page-info" aria-live="polite">
            Page {filters.page} of {pagination.total_capped ? `${Math.max(pages, filters.page)}+` : pages} ·{' '}
            {pagination.total_capped
              ? `more than ${pagination.total} events`
              : plural(pagination.total, 'event')}
          </span>
          <button
            type="button"
            class="btn"
            data-testid="page-next"
            disabled={lastPage || loading}
            onClick={() => setFilters((f) => ({ ...f, page: f.page + 1 }))}
          >
            Next <span aria-hidden="true">→</span>
          </button>
        </nav>
      )}
    </section>
  );
}

function EventRow({ endpointId, event, fresh }: { endpointId: string; event: EventSummary; fresh: boolean }) {
  const body = preview(event.body, event.body_encoding);
  return (
    <li class={`event-row${fresh ? ' fresh' : ''}`} data-testid="event-row" data-event-id={event.id}>
      <a class="event-link" href={href.event(endpointId, event.id)}>
        <StatusBadge status={event.status} testId="event-status" />
        <span class="method">{event.method ?? '—'}</span>
        <span class="event-preview">{body || <span class="muted">Open to see the payload</span>}</span>
        <span class="event-meta">
          <VerificationBadge verification={event.verification} />{' '}
          <time dateTime={event.received_at}>{localTime(event.received_at)}</time>
          {event.source_ip ? <span> · {event.source_ip}</span> : null}
        </span>
      </a>
    </li>
  );
}

function EmptyState({ endpoint }: { endpoint: Endpoint }) {
  const curl = `curl -X POST '${endpoint.capture_url}' -H 'content-type: application/json' -d '{"type":"test.event","id":"evt_123"}'`;
  return (
    <div class="empty teach" data-testid="events-empty">
      <h3>No events yet: send your first webhook</h3>
      <p>
        Any request to <code class="url">{endpoint.capture_url}</code> is captured. Try it from a terminal;
        the event appears here within a second, no reload needed.
      </p>
      <div class="code-block">
        <pre data-testid="curl-command">{curl}</pre>
        <CopyButton text={curl} testId="copy-curl" ariaLabel="Copy curl command" />
      </div>
      <p class="muted small">
        Then point your provider (Stripe, GitHub, Shopify…) at the capture URL, and add a destination above to
        forward what arrives.
      </p>
      {!endpoint.is_active && (
        <p class="alert alert-warning">
          The endpoint is inactive: turn “Accept webhooks” on first, or the request is refused.
        </p>
      )}
    </div>
  );
}
