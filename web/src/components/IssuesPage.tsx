import { useEffect, useState } from 'preact/hooks';
import { listEndpoints } from '../api/endpoints';
import { isAbortError } from '../api/errors';
import { getIssue, listIssues, setIssueStatus } from '../api/issues';
import { currentUser } from '../api/session';
import { localTime, plural } from '../format';
import { useBusyAction, useDocumentTitle } from '../hooks';
import {
  announceIssuesChanged,
  ISSUE_KIND_TEXT,
  ISSUE_STATUS_TEXT,
  type IssueFilters,
  issueFiltersOf,
  issueFiltersQuery,
  issuesApiQuery,
  offersDiagnosis,
  onIssuesChanged,
} from '../issues';
import { canWrite } from '../roles';
import { href, replaceHash } from '../router';
import { type Endpoint, ISSUE_STATUSES, type Issue, type IssueWithDiagnosis } from '../types';
import { Alert } from './Alert';
import { SelectField } from './Field';

/** The list is loaded again this often while the page is open (failures keep coming in). */
const REFRESH_MS = 30_000;

const STATUS_OPTIONS: readonly (readonly [Issue['status'] | '', string])[] = [
  ...ISSUE_STATUSES.map((status) => [status, ISSUE_STATUS_TEXT[status]] as const),
  ['', 'Any status'],
];

/** A destination's failures grouped by kind: filter them, read them, acknowledge them. */
export function IssuesPage({ params }: { params: URLSearchParams }) {
  useDocumentTitle('Issues');
  const [filters, setFilters] = useState<IssueFilters>(() => issueFiltersOf(params));
  const [issues, setIssues] = useState<Issue[] | null>(null);
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [announcement, setAnnouncement] = useState('');

  // The hash changed under us (the header's link, back/forward): follow its filters.
  useEffect(() => {
    const next = issueFiltersOf(params);
    setFilters((current) => (issueFiltersQuery(current) === issueFiltersQuery(next) ? current : next));
  }, [params]);

  useEffect(() => {
    const controller = new AbortController();
    listEndpoints(controller.signal).then(
      setEndpoints,
      () => undefined, // the filter then offers "All endpoints" only, and no issue can be acknowledged
    );
    return () => controller.abort();
  }, []);

  useEffect(() => {
    replaceHash(href.issues(issueFiltersQuery(filters)));
    let controller = new AbortController();
    const load = () => {
      controller.abort();
      controller = new AbortController();
      listIssues(issuesApiQuery(filters), controller.signal).then(
        (list) => {
          setIssues(list);
          setError(null);
        },
        (err) => {
          if (!isAbortError(err)) setError(err);
        },
      );
    };
    setIssues(null);
    load();
    const timer = setInterval(load, REFRESH_MS);
    const stop = onIssuesChanged(load);
    return () => {
      clearInterval(timer);
      stop();
      controller.abort();
    };
  }, [filters]);

  const onChanged = (updated: Issue) => {
    setIssues((list) => list?.map((issue) => (issue.id === updated.id ? updated : issue)) ?? null);
    setAnnouncement(`Issue ${ISSUE_STATUS_TEXT[updated.status].toLowerCase()}: ${updated.summary}`);
  };

  const endpointOf = (id: string) => endpoints.find((endpoint) => endpoint.id === id);
  const endpointOptions: readonly (readonly [string, string])[] = [
    ['', 'All endpoints'],
    ...endpoints.map((endpoint) => [endpoint.id, endpoint.name] as const),
  ];

  return (
    <div class="page">
      <div class="page-head">
        <h1 tabIndex={-1} data-autofocus>
          Issues
        </h1>
        <p class="muted">
          A destination's failures of one kind, grouped: opened by the first, counting the rest, resolved by
          themselves when it delivers again. Acknowledge one to say you are on it.
        </p>
      </div>
      <form class="filters" aria-label="Filter issues" onSubmit={(event) => event.preventDefault()}>
        <SelectField
          id="issues-status"
          label="Status"
          value={filters.status}
          options={STATUS_OPTIONS}
          onChange={(status) => setFilters((f) => ({ ...f, status }))}
        />
        <SelectField
          id="issues-endpoint"
          label="Endpoint"
          value={filters.endpointId}
          options={endpointOptions}
          onChange={(endpointId) => setFilters((f) => ({ ...f, endpointId }))}
        />
      </form>
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      <section aria-labelledby="issues-heading">
        <h2 id="issues-heading" class="section-title">
          {issues ? plural(issues.length, 'issue') : 'Issues'}
        </h2>
        <Alert error={error} />
        {!issues && !error && (
          <p class="muted" aria-busy="true">
            Loading issues…
          </p>
        )}
        {issues?.length === 0 && (
          <div class="empty" data-testid="issues-empty">
            <p>
              <strong>No issues here.</strong>{' '}
              {filters.status === 'open'
                ? 'Every destination delivers: when one fails, its issue shows up here.'
                : 'Nothing matches these filters.'}
            </p>
          </div>
        )}
        {issues && issues.length > 0 && (
          <ul class="issue-list" data-testid="issues-list">
            {issues.map((issue) => {
              const endpoint = endpointOf(issue.endpoint_id);
              return (
                <IssueRow
                  key={issue.id}
                  issue={issue}
                  endpointName={endpoint?.name ?? issue.endpoint_id}
                  writable={canWrite(endpoint?.role)}
                  diagnosable={offersDiagnosis(currentUser()?.plan, endpoint)}
                  onChanged={onChanged}
                />
              );
            })}
          </ul>
        )}
      </section>
    </div>
  );
}

interface RowProps {
  issue: Issue;
  endpointName: string;
  /** The caller may acknowledge it (a member or above on its endpoint). */
  writable: boolean;
  /** Its endpoint's plan offers an AI diagnosis (`offersDiagnosis`). */
  diagnosable: boolean;
  onChanged: (issue: Issue) => void;
}

function IssueRow({ issue, endpointName, writable, diagnosable, onChanged }: RowProps) {
  const { busy, error, run } = useBusyAction();

  const acknowledge = () =>
    run(async () => {
      onChanged(await setIssueStatus(issue.id, 'acknowledged'));
      announceIssuesChanged();
    });

  return (
    <li
      class="issue-row"
      data-testid="issue-row"
      data-issue-id={issue.id}
      data-status={issue.status}
      data-kind={issue.kind}
    >
      <div class="issue-title">
        <span class={`badge badge-issue-${issue.status}`} data-testid="issue-status">
          {ISSUE_STATUS_TEXT[issue.status]}
        </span>
        <span class="badge badge-unknown" data-testid="issue-kind">
          {ISSUE_KIND_TEXT[issue.kind]}
        </span>
        <strong class="issue-summary" data-testid="issue-summary">
          {issue.summary}
        </strong>
      </div>
      <p class="issue-where small">
        <code class="url" data-testid="issue-destination">
          {issue.destination.url}
        </code>{' '}
        <span class="muted">
          on <a href={href.endpoint(issue.endpoint_id)}>{endpointName}</a>
        </span>
      </p>
      <dl class="facts facts-compact">
        <div>
          <dt>Failures</dt>
          <dd data-testid="issue-failure-count">{issue.failure_count}</dd>
        </div>
        <div>
          <dt>First seen</dt>
          <dd>{localTime(issue.first_seen_at)}</dd>
        </div>
        <div>
          <dt>Last seen</dt>
          <dd>{localTime(issue.last_seen_at)}</dd>
        </div>
        <div>
          <dt>{issue.status === 'resolved' ? 'Resolved' : 'Latest failing event'}</dt>
          <dd>
            {issue.status === 'resolved' ? (
              localTime(issue.resolved_at)
            ) : issue.last_event_id ? (
              <a data-testid="issue-event-link" href={href.event(issue.endpoint_id, issue.last_event_id)}>
                Open the event
              </a>
            ) : (
              '—'
            )}
          </dd>
        </div>
      </dl>
      <div class="issue-actions">
        {writable && issue.status === 'open' && (
          <button
            type="button"
            class="btn btn-small"
            data-testid="acknowledge-issue"
            aria-label={`Acknowledge: ${issue.summary}`}
            onClick={() => void acknowledge()}
            disabled={busy}
          >
            {busy ? 'Acknowledging…' : 'Acknowledge'}
          </button>
        )}
      </div>
      <Diagnosis issueId={issue.id} offered={diagnosable} />
      {error !== null && (
        <div class="row-error">
          <Alert error={error} />
        </div>
      )}
    </li>
  );
}

/** The AI's diagnosis of the issue's latest failure, asked for on demand (Starter plan and above). */
function Diagnosis({ issueId, offered }: { issueId: string; offered: boolean }) {
  const [state, setState] = useState<'idle' | 'loading' | 'shown'>('idle');
  const [detail, setDetail] = useState<IssueWithDiagnosis | null>(null);
  const [error, setError] = useState<unknown>(null);

  if (!offered) {
    return (
      <p class="muted small issue-diagnosis" data-testid="issue-diagnosis-upgrade">
        An AI diagnosis of each issue comes with the Starter plan and above.
      </p>
    );
  }

  // Never rejects (a failure is shown through setError), so the button fires and forgets it.
  const load = async () => {
    setState('loading');
    setError(null);
    try {
      setDetail(await getIssue(issueId));
      setState('shown');
    } catch (err) {
      setError(err);
      setState('idle');
    }
  };

  if (state === 'shown') {
    const diagnosis = detail?.diagnosis;
    return (
      <div class="issue-diagnosis" data-testid="issue-diagnosis">
        {diagnosis ? (
          <>
            <p class="muted small">AI diagnosis ({diagnosis.provider}):</p>
            <pre class="code prose">{diagnosis.diagnosis}</pre>
          </>
        ) : (
          <p class="muted small">
            No diagnosis for this issue: its event is gone, the AI engine did not answer, or 30 new diagnoses
            were asked for in the last minute (try again in a minute).
          </p>
        )}
      </div>
    );
  }
  return (
    <div class="issue-diagnosis">
      <button
        type="button"
        class="btn btn-small btn-ghost"
        data-testid="diagnose-issue"
        onClick={() => void load()}
        disabled={state === 'loading'}
      >
        {state === 'loading' ? 'Diagnosing…' : 'Diagnose with AI'}
      </button>
      <Alert error={error} />
    </div>
  );
}
