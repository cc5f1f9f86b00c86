/** The typed job catalog of notification channels. */
export const NOTIFICATION_QUEUE = 'notifications';

/** Sends what a channel's outbox holds: one message, or one digest of everything pending. */
export interface NotificationJob {
  channelId: string;
}

/**
 * At most one message per channel in this window; what comes later goes out as one digest at its end. Two
 * minutes keeps a chat readable (30 messages an hour at the very most) without hiding an issue for long.
 */
export const NOTIFICATION_WINDOW_MS = 2 * 60 * 1000;

/** The Bull back-off strategy that follows DELIVERY_RETRY_DELAYS_MS (registered with the queue). */
export const RETRY_SCHEDULE_BACKOFF = 'retry-schedule';

/** After this many messages dropped in a row (each after all its retries) a channel is disabled. */
export const DISABLE_AFTER_DROPPED_MESSAGES = 5;

/** A digest lists at most this many notifications; it counts the rest. */
export const DIGEST_ITEM_LIMIT = 50;
