import { type Endpoint, ISSUE_STATUSES, type Issue } from './types';

/** What each kind of failure is called on the issues page. */
export const ISSUE_KIND_TEXT: Record<Issue['kind'], string> = {
  http_4xx: 'HTTP 4xx answers',
  http_5xx: 'HTTP 5xx answers',
  timeout: 'Time-outs',
  connection: 'Connection failures',
  tls: 'TLS errors',
  dns: 'DNS failures',
  refused_address: 'Refused address',
};

export const ISSUE_STATUS_TEXT: Record<Issue['status'], string> = {
  open: 'Open',
  acknowledged: 'Acknowledged',
  resolved: 'Resolved',
};

/** The issues page's filters, as kept in the hash: a status ('' for any) and an endpoint id ('' for all). */
export interface IssueFilters {
  status: Issue['status'] | '';
  endpointId: string;
}

/** The filters of the hash's query. No status means open issues (what needs looking at); `all` means any. */
export function issueFiltersOf(params: URLSearchParams): IssueFilters {
  const status = params.get('status') ?? 'open';
  return {
    status: (ISSUE_STATUSES as readonly string[]).includes(status) ? (status as Issue['status']) : '',
    endpointId: params.get('endpoint_id') ?? '',
  };
}

/** The hash query of the filters (open, the default, left out), without the `?`. */
export function issueFiltersQuery(filters: IssueFilters): string {
  const params = new URLSearchParams();
  if (filters.status !== 'open') params.set('status', filters.status || 'all');
  if (filters.endpointId) params.set('endpoint_id', filters.endpointId);
  return params.toString();
}

/** The API's query for the filters, without the `?`. */
export function issuesApiQuery(filters: IssueFilters): string {
  const params = new URLSearchParams();
  if (filters.status) params.set('status', filters.status);
  if (filters.endpointId) params.set('endpoint_id', filters.endpointId);
  return params.toString();
}

/** Issues not resolved yet: open, or acknowledged by someone who is looking into them. */
export function isUnresolved(issue: Pick<Issue, 'status'>): boolean {
  return issue.status !== 'resolved';
}

/**
 * Whether an issue's AI diagnosis may be asked for: on the plan of its endpoint, as the API judges it, so
 * a team's endpoint is on the team plan whatever the caller's own (an endpoint not known here: the
 * caller's plan).
 */
export function offersDiagnosis(
  userPlan: string | undefined,
  endpoint: Pick<Endpoint, 'team_id'> | undefined,
): boolean {
  return (endpoint?.team_id ?? null) !== null || userPlan !== 'free';
}

const ISSUES_CHANGED = 'hooktrail:issues-changed';

/**
 * Something may have opened, resolved or acknowledged an issue (a delivery failed or succeeded on a live
 * stream, an issue was acknowledged here): whoever shows issues (the header's badge) loads them again.
 */
export function announceIssuesChanged(): void {
  window.dispatchEvent(new Event(ISSUES_CHANGED));
}

export function onIssuesChanged(listener: () => void): () => void {
  window.addEventListener(ISSUES_CHANGED, listener);
  return () => window.removeEventListener(ISSUES_CHANGED, listener);
}
