import type { FailureKind } from '../outbound/delivery-sender';

export const ISSUE_STATUSES = ['open', 'acknowledged', 'resolved'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];

/** An issue as its queries read it: a destination's failed attempts of one kind (README, "Issues"). */
export interface Issue {
  id: string;
  endpointId: string;
  destination: { id: string; url: string };
  kind: FailureKind;
  /** The latest failure of its kind, in words (its HTTP status, or what went wrong). */
  summary: string;
  status: IssueStatus;
  failureCount: number;
  firstSeenAt: Date;
  lastSeenAt: Date;
  /** The event of the latest failure. */
  lastEventId: string | null;
  resolvedAt: Date | null;
}

/** The columns every query of issues reads, from `issues i` joined to its destination and endpoint. */
export const ISSUE_COLUMNS = `i.id, i.endpoint_id, i.destination_id, dest.url as destination_url,
  i.kind, i.summary, i.status, i.failure_count, i.first_seen_at, i.last_seen_at, i.last_event_id, i.resolved_at`;

/** The joins ISSUE_COLUMNS needs, after `from issues i` (or a CTE aliased `i`). */
export const ISSUE_JOINS = `join destinations dest on dest.id = i.destination_id
  join endpoints ep on ep.id = i.endpoint_id`;

export interface IssueRow {
  id: string;
  endpoint_id: string;
  destination_id: string;
  destination_url: string;
  kind: FailureKind;
  summary: string;
  status: IssueStatus;
  failure_count: number;
  first_seen_at: Date | string;
  last_seen_at: Date | string;
  last_event_id: string | null;
  resolved_at: Date | string | null;
}

export function issueOf(row: IssueRow): Issue {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    destination: { id: row.destination_id, url: row.destination_url },
    kind: row.kind,
    summary: row.summary,
    status: row.status,
    failureCount: row.failure_count,
    firstSeenAt: new Date(row.first_seen_at),
    lastSeenAt: new Date(row.last_seen_at),
    lastEventId: row.last_event_id,
    resolvedAt: row.resolved_at === null ? null : new Date(row.resolved_at),
  };
}
