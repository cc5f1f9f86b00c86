import type { NotificationEvent } from '../notifications/notification-events';
import type { AutoPausedDestination } from './destination-health';
import type { Issue } from './issue';
import { toIssueDto } from './issue.presenter';

/** The notifications of what a batch of attempts changed: issues opened and resolved, destinations paused. */
export function issueNotifications(
  opened: readonly Issue[],
  resolved: readonly Issue[],
  paused: readonly AutoPausedDestination[],
): NotificationEvent[] {
  return [
    ...opened.map((issue): NotificationEvent => ({
      endpointId: issue.endpointId,
      type: 'issue.opened',
      data: { issue: toIssueDto(issue) },
    })),
    ...resolved.map((issue): NotificationEvent => ({
      endpointId: issue.endpointId,
      type: 'issue.resolved',
      data: { issue: toIssueDto(issue) },
    })),
    ...paused.map((destination): NotificationEvent => ({
      endpointId: destination.endpointId,
      type: 'destination.paused',
      data: {
        endpoint_id: destination.endpointId,
        destination: {
          id: destination.id,
          url: destination.url,
          paused: true,
          paused_reason: destination.pausedReason,
          auto_pause_after: destination.autoPauseAfter,
        },
      },
    })),
  ];
}
