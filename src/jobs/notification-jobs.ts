/** The typed job catalog of notification channels. */
export const NOTIFICATION_QUEUE = 'notifications';

/** Sends what a channel's outbox holds that is due: each notification at once, or digests at their window's end. */
export interface NotificationJob {
  channelId: string;
}

/**
 * How long a job's claim of a message lasts while it sends it: longer than any send takes (an HTTP send
 * ends within DELIVERY_TIMEOUT_MS, at most 2 minutes; a mail within SMTP_TIMEOUTS_MS). A worker that died
 * sending leaves the message to another job once it runs out, which sends it again with the same id.
 */
export const NOTIFICATION_CLAIM_MS = 5 * 60 * 1000;

/**
 * A message that failed is held for its retry (a job due after the next delay of DELIVERY_RETRY_DELAYS_MS)
 * this much longer than the delay: the sweep sends it only if that retry was lost with Redis.
 */
export const RETRY_HOLD_MARGIN_MS = 30_000;

/** After this many messages dropped in a row (each after all its retries) a channel is disabled. */
export const DISABLE_AFTER_DROPPED_MESSAGES = 5;
