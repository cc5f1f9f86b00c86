import { useEffect, useState } from 'preact/hooks';
import { isAbortError } from '../api/errors';
import { eventRouting, testFilter } from '../api/routing';
import type { EventRoute, FilterVerdict } from '../types';
import { Alert } from './Alert';
import { FilterField, parseFilter } from './FilterField';

interface Props {
  endpointId: string;
  eventId: string;
}

/** Which destinations would get the event were it captured now (and why not), and a filter tried on it. */
export function Routing({ endpointId, eventId }: Props) {
  const [routes, setRoutes] = useState<EventRoute[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    const controller = new AbortController();
    eventRouting(endpointId, eventId, controller.signal).then(setRoutes, (err) => {
      if (!isAbortError(err)) setError(err);
    });
    return () => controller.abort();
  }, [endpointId, eventId]);

  return (
    <section class="card" aria-labelledby="routing-heading">
      <div class="card-head">
        <h2 id="routing-heading">Routing</h2>
        <span class="muted small">Where it would go, were it captured now</span>
      </div>
      <Alert error={error} />
      {routes === null && error === null && (
        <p class="muted" aria-busy="true">
          Loading routing…
        </p>
      )}
      {routes?.length === 0 && <p class="muted">The endpoint has no destinations.</p>}
      {routes && routes.length > 0 && (
        <ul class="route-list">
          {routes.map((route) => (
            <li key={route.id} class="route" data-testid="route" data-receives={String(route.receives)}>
              <span class={`route-verdict ${route.receives ? 'route-yes' : 'route-no'}`}>
                <span aria-hidden="true">{route.receives ? '✓' : '✗'}</span>{' '}
                {route.receives ? 'Receives' : 'Skipped'}
              </span>
              <code class="url">{route.url}</code>
              {route.reason && (
                <span class="route-reason" data-testid="route-reason">
                  {route.reason}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
      <FilterTest endpointId={endpointId} eventId={eventId} />
    </section>
  );
}

/** A filter written here is tried on the event by the server; nothing is saved. */
function FilterTest({ endpointId, eventId }: Props) {
  const [text, setText] = useState('');
  const [verdict, setVerdict] = useState<FilterVerdict | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  // Never rejects (failures are shown through setError), so the form fires and forgets it.
  const run = async (event: Event) => {
    event.preventDefault();
    setVerdict(null);
    const parsed = parseFilter(text);
    if ('error' in parsed) {
      setError(parsed.error);
      return;
    }
    setError(null);
    setBusy(true);
    try {
      setVerdict(await testFilter(endpointId, eventId, parsed.filter));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="subsection filter-test"
      onSubmit={(event) => void run(event)}
      aria-labelledby="filter-test-heading"
    >
      <h3 id="filter-test-heading">Test a filter against this event</h3>
      <FilterField id="filter-test" label="Filter (JSON)" value={text} onInput={setText} />
      <div class="toolbar">
        <button type="submit" class="btn" data-testid="run-filter-test" disabled={busy}>
          {busy ? 'Testing…' : 'Test filter'}
        </button>
      </div>
      <Alert error={error} testId="filter-test-error" />
      <p
        class={verdict ? `alert ${verdict.matches ? 'alert-success' : 'alert-warning'}` : 'sr-only'}
        role="status"
        data-testid="filter-test-result"
        data-matches={verdict ? String(verdict.matches) : undefined}
      >
        {verdict &&
          (verdict.matches
            ? 'Matches: a destination with this filter gets this event.'
            : `No match: ${verdict.reason}`)}
      </p>
    </form>
  );
}
