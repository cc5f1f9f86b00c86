/** The kinds of event a notification channel may subscribe to (design.md, "Issues, notifications and statistics"). */
export const NOTIFICATION_EVENT_TYPES = [
  'dead_letter',
  'issue.opened',
  'issue.resolved',
  'destination.paused',
] as const;
export type NotificationEventType = (typeof NOTIFICATION_EVENT_TYPES)[number];

/**
 * One thing about an endpoint to tell the channels of those who answer for it (its owner, or its team's
 * owners): `data` is the JSON sent as the webhook channel's `data`.
 */
export interface NotificationEvent {
  /** The endpoint: its account holders' channels subscribed to `type` are told. */
  endpointId: string;
  type: NotificationEventType;
  data: Record<string, unknown>;
}
