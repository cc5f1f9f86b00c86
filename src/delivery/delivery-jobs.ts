import type { JobOptions } from 'bull';

/** The typed job catalog of the delivery engine: queue names, payloads (ids only) and retry options. */
export const DELIVERY_QUEUE = 'delivery';
export const DELIVERY_BACKOFF = 'hooktrail-retry-schedule';

export interface DeliveryJob {
  deliveryId: string;
}

export interface DeliveryBackoffOptions {
  /** Attempts already made before this job was (re-)enqueued, so the schedule continues where it was. */
  priorAttempts: number;
}

/**
 * Failed jobs (dead-lettered deliveries) stay in Bull a while for inspection, then go: Redis does not grow
 * with history. Completed jobs go at once (their attempts are in PostgreSQL), which keeps each job's
 * completion to the fewest Redis commands.
 */
const KEEP_FAILED = { age: 3600, count: 1000 };

/** `retryDelaysMs` has the four retry delays, so a delivery has 5 attempts in all. */
export function deliveryJobOptions(
  deliveryId: string,
  retryDelaysMs: number[],
  priorAttempts = 0,
  delayMs = 0,
): JobOptions {
  const options: DeliveryBackoffOptions = { priorAttempts };
  return {
    jobId: deliveryId,
    attempts: Math.max(1, retryDelaysMs.length + 1 - priorAttempts),
    backoff: { type: DELIVERY_BACKOFF, options },
    delay: delayMs,
    removeOnComplete: true,
    removeOnFail: KEEP_FAILED,
  };
}

/** The delay before retry number `attemptsMade` (1-based), with ±10 % jitter. */
export function retryDelay(
  retryDelaysMs: number[],
  attemptsMade: number,
  options?: DeliveryBackoffOptions,
): number {
  const index = Math.min(retryDelaysMs.length, attemptsMade + (options?.priorAttempts ?? 0)) - 1;
  const base = retryDelaysMs[Math.max(0, index)];
  return Math.round(base * (0.9 + Math.random() * 0.2));
}
