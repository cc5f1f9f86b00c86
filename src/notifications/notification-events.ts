/** The kinds of event a notification channel may subscribe to (design.md, "Issues, notifications and statistics"). */
export const NOTIFICATION_EVENT_TYPES = [
  'dead_letter',
  'issue.opened',
  'issue.resolved',
  'destination.paused',
] as const;
export type NotificationEventType = (typeof NOTIFICATION_EVENT_TYPES)[number];

/** One thing to tell a user's channels about: `data` is the JSON sent as the webhook channel's `data`. */
export interface NotificationEvent {
  /** The user whose channels subscribed to `type` are told. */
  userId: string;
  type: NotificationEventType;
  data: Record<string, unknown>;
}
