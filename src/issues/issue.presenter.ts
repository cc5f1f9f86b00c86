import type { IssueDto } from './dto/issue.dto';
import type { Issue } from './issue';

/** The API shape of an issue (snake_case). */
export function toIssueDto(issue: Issue): IssueDto {
  return {
    id: issue.id,
    endpoint_id: issue.endpointId,
    destination: { id: issue.destination.id, url: issue.destination.url },
    kind: issue.kind,
    summary: issue.summary,
    status: issue.status,
    failure_count: issue.failureCount,
    first_seen_at: issue.firstSeenAt.toISOString(),
    last_seen_at: issue.lastSeenAt.toISOString(),
    last_event_id: issue.lastEventId,
    resolved_at: issue.resolvedAt?.toISOString() ?? null,
  };
}
