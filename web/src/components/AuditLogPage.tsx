import { useEffect, useState } from 'preact/hooks';
import { listAuditLog } from '../api/audit-log';
import { listEndpoints } from '../api/endpoints';
import { isAbortError } from '../api/errors';
import {
  actionText,
  actorText,
  type AuditFilters,
  auditApiQuery,
  auditFiltersOf,
  auditFiltersQuery,
  changesText,
  targetText,
} from '../audit-log';
import { localTime, plural } from '../format';
import { useDocumentTitle, useTeams } from '../hooks';
import { canManage } from '../roles';
import { href, replaceHash } from '../router';
import { inScope } from '../team-scope';
import type { AuditEntry, AuditPage, Endpoint } from '../types';
import { Alert } from './Alert';
import { SelectField } from './Field';

/**
 * Every write made through the API, newest first: one's personal account's, or a team's (its admins),
 * narrowed to one endpoint if wished. The filters and the page are kept in the hash.
 */
export function AuditLogPage({ params }: { params: URLSearchParams }) {
  useDocumentTitle('Audit log');
  const [filters, setFilters] = useState<AuditFilters>(() => auditFiltersOf(params));
  const [data, setData] = useState<AuditPage | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(null);
  const { teams } = useTeams();
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);

  // The hash changed under us (the header's link, back/forward): follow its filters.
  useEffect(() => {
    const next = auditFiltersOf(params);
    setFilters((current) => (auditFiltersQuery(current) === auditFiltersQuery(next) ? current : next));
  }, [params]);

  useEffect(() => {
    const controller = new AbortController();
    // Without them the endpoint filter offers "All endpoints" only.
    listEndpoints(controller.signal).then(setEndpoints, () => undefined);
    return () => controller.abort();
  }, []);

  useEffect(() => {
    replaceHash(href.auditLog(auditFiltersQuery(filters)));
    const controller = new AbortController();
    setLoading(true);
    listAuditLog(auditApiQuery(filters), controller.signal)
      .then((page) => {
        setData(page);
        setError(null);
      })
      .catch((err) => {
        if (!isAbortError(err)) setError(err);
      })
      .finally(() => {
        if (!controller.signal.aborted) setLoading(false);
      });
    return () => controller.abort();
  }, [filters]);

  const scope = filters.teamId || null;
  const scopeOptions: readonly (readonly [string, string])[] = [
    ['', 'Personal account'],
    // A team's log is for its admins; a team chosen by a link stays listed (its 403 says why).
    ...(teams ?? [])
      .filter((team) => canManage(team.role) || team.id === filters.teamId)
      .map((team) => [team.id, team.name] as const),
  ];
  const endpointOptions: readonly (readonly [string, string])[] = [
    ['', 'All endpoints'],
    ...endpoints
      .filter((endpoint) => inScope(endpoint, scope))
      .map((endpoint) => [endpoint.id, endpoint.name] as const),
  ];
  const pagination = data?.pagination;

  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1} data-autofocus>
          Audit log
        </h1>
        <p class="muted">
          Every change made through the API or the dashboard: who made it (a user, or an API key), what, to
          what, from which address, and what was sent (secrets are never kept). A team’s log is for its admins
          and owners.
        </p>
      </div>
      <form class="filters" aria-label="Filter the audit log" onSubmit={(event) => event.preventDefault()}>
        <SelectField
          id="audit-scope"
          label="Scope"
          value={filters.teamId}
          options={scopeOptions}
          onChange={(teamId) => setFilters({ teamId, endpointId: '', page: 1 })}
        />
        <SelectField
          id="audit-endpoint"
          label="Endpoint"
          value={filters.endpointId}
          options={endpointOptions}
          onChange={(endpointId) => setFilters((f) => ({ ...f, endpointId, page: 1 }))}
        />
      </form>
      <section aria-labelledby="audit-heading">
        <h2 id="audit-heading" class="section-title">
          {pagination ? plural(pagination.total, 'entry', 'entries') : 'Entries'}
        </h2>
        <Alert error={error} testId="audit-error" />
        {!data && loading && (
          <p class="muted" aria-busy="true">
            Loading the audit log…
          </p>
        )}
        {data?.entries.length === 0 && (
          <div class="empty" data-testid="audit-empty">
            <p>
              <strong>Nothing here yet.</strong> Changes show up as soon as they are made.
            </p>
          </div>
        )}
        {data && data.entries.length > 0 && <AuditTable entries={data.entries} loading={loading} />}
      </section>
      {pagination && pagination.pages > 1 && (
        <nav class="pagination" aria-label="Audit log pages">
          <button
            type="button"
            class="btn"
            data-testid="audit-page-prev"
            disabled={filters.page <= 1 || loading}
            onClick={() => setFilters((f) => ({ ...f, page: f.page - 1 }))}
          >
            <span aria-hidden="true">←</span> Previous
          </button>
          <span data-testid="audit-page-info" aria-live="polite">
            Page {filters.page} of {pagination.pages}
          </span>
          <button
            type="button"
            class="btn"
            data-testid="audit-page-next"
            disabled={filters.page >= pagination.pages || loading}
            onClick={() => setFilters((f) => ({ ...f, page: f.page + 1 }))}
          >
            Next <span aria-hidden="true">→</span>
          </button>
        </nav>
      )}
    </div>
  );
}

function AuditTable({ entries, loading }: { entries: AuditEntry[]; loading: boolean }) {
  return (
    <div class={`table-wrap audit${loading ? ' is-loading' : ''}`}>
      <table data-testid="audit-entries" aria-busy={loading}>
        <caption class="sr-only">Audit log entries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">IP</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => (
            <AuditRow key={entry.id} entry={entry} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function AuditRow({ entry }: { entry: AuditEntry }) {
  const changes = changesText(entry.changes);
  return (
    <tr data-testid="audit-entry" data-action={entry.action} data-actor-type={entry.actor.type}>
      <td>
        <time dateTime={entry.at}>{localTime(entry.at)}</time>
      </td>
      <td data-testid="audit-actor">{actorText(entry.actor)}</td>
      <td data-testid="audit-action">
        {actionText(entry.action)}
        <br />
        <code class="small">{entry.action}</code>
      </td>
      <td data-testid="audit-target">
        <TargetLink target={entry.target} />
      </td>
      <td>
        <code class="small">{entry.ip ?? '—'}</code>
      </td>
      <td>
        {changes === null ? (
          <span class="muted">—</span>
        ) : (
          <details class="audit-changes">
            <summary>Show</summary>
            <pre class="code code-small" data-testid="audit-changes">
              {changes}
            </pre>
          </details>
        )}
      </td>
    </tr>
  );
}

/** The target, linked to its page when it has one (an endpoint, a team). */
function TargetLink({ target }: { target: AuditEntry['target'] }) {
  const text = targetText(target);
  if (target.id && target.type === 'endpoint') return <a href={href.endpoint(target.id)}>{text}</a>;
  if (target.id && target.type === 'team') return <a href={href.team(target.id)}>{text}</a>;
  return <>{text}</>;
}
