import type { JobOptions } from 'bull';

/** The typed job catalog of the delivery engine: queue names, payloads (ids only) and retry options. */
export const DELIVERY_QUEUE = 'delivery';
export const DELIVERY_BACKOFF = 'hooktrail-retry-schedule';

/** One delivery's job: a retry, a deferred attempt, a delivery the sweeper or a resume enqueued. */
export interface DeliveryJob {
  deliveryId: string;
  /** Enqueued by a dispatch job that had to defer it: its first run comes back from a deferral. */
  deferred?: true;
}

/**
 * A dispatch job (named DISPATCH_JOB): the first attempts of up to DISPATCH_SIZE new deliveries (a capture
 * batch's, a replay's), so that Bull's per-job Redis work is paid once for all of them. What cannot be
 * finished in it (a failed attempt with retries left, a deferral, an error) continues in a DeliveryJob.
 */
export const DISPATCH_JOB = 'dispatch';
export const DISPATCH_SIZE = 100;

export interface DispatchJob {
  deliveryIds: string[];
}

/** A dispatch job: its id from its first delivery (one job per batch), run once; its leftovers are enqueued. */
export function dispatchJobOptions(deliveryIds: readonly string[]): JobOptions {
  return {
    jobId: `dispatch:${deliveryIds[0]}`,
    attempts: 1,
    removeOnComplete: true,
    removeOnFail: KEEP_FAILED,
  };
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

/** The attempts a delivery had when its job was (re-)enqueued, read from the job's backoff options. */
export function priorAttemptsOf(job: { opts: Pick<JobOptions, 'backoff'> }): number {
  const backoff = job.opts.backoff;
  return typeof backoff === 'object'
    ? ((backoff.options as DeliveryBackoffOptions | undefined)?.priorAttempts ?? 0)
    : 0;
}

/**
 * Thrown after a failed attempt that has retries left, so that Bull schedules the next one. It carries
 * the delivery's attempt count from PostgreSQL, which picks the delay: Bull's own count of the job's runs
 * also counts the runs that were deferred.
 */
export class RetryableDeliveryError extends Error {
  constructor(
    readonly deliveryId: string,
    readonly attemptCount: number,
  ) {
    super(`attempt ${attemptCount} of delivery ${deliveryId} failed`);
  }
}

/**
 * Thrown, without an attempt, when the destination has no free slot or its next rate slot is later: the
 * job runs again after `delayMs`.
 */
export class DeferredDeliveryError extends Error {
  constructor(
    readonly deliveryId: string,
    readonly delayMs: number,
  ) {
    super(`delivery ${deliveryId} deferred ${delayMs} ms: its destination is at one of its limits`);
  }
}

/** An attempt cut off by its worker's shutdown is sent again after this pause, by another worker (or this one back). */
export const ABANDONED_ATTEMPT_DELAY_MS = 1000;

/**
 * Thrown when the worker shut down before the destination answered (its connections are closed): the
 * attempt is abandoned, not failed. Nothing is recorded, no retry is used, and the job runs again after
 * `ABANDONED_ATTEMPT_DELAY_MS`, as a deferred one does.
 */
export class AbandonedAttemptError extends DeferredDeliveryError {
  constructor(deliveryId: string) {
    super(deliveryId, ABANDONED_ATTEMPT_DELAY_MS);
    this.message = `attempt of delivery ${deliveryId} abandoned: its worker shut down before the destination answered`;
  }
}

/**
 * Runs of a job beyond its attempts: deferrals (and unexpected errors). PostgreSQL, not Bull, decides
 * when a delivery is finished, so this only bounds a job that keeps failing without an attempt; the
 * sweeper enqueues its delivery again if that ever happens.
 */
const RUNS_WITHOUT_ATTEMPT = 10_000;

/**
 * `retryDelaysMs` has the four retry delays, so a delivery has 5 attempts in all; its job may also be
 * deferred up to `RUNS_WITHOUT_ATTEMPT` times.
 */
export function deliveryJobOptions(
  deliveryId: string,
  retryDelaysMs: number[],
  priorAttempts = 0,
  delayMs = 0,
): JobOptions {
  const options: DeliveryBackoffOptions = { priorAttempts };
  return {
    jobId: deliveryId,
    attempts: Math.max(1, retryDelaysMs.length + 1 - priorAttempts) + RUNS_WITHOUT_ATTEMPT,
    backoff: { type: DELIVERY_BACKOFF, options },
    delay: delayMs,
    removeOnComplete: true,
    removeOnFail: KEEP_FAILED,
  };
}

/** What a dispatch job enqueues for a delivery whose first attempt threw `error`: its own job, continuing. */
export function continuationOf(
  deliveryId: string,
  error: unknown,
  retryDelaysMs: number[],
): { id: string; priorAttempts: number; delayMs: number; deferred?: true } {
  if (error instanceof RetryableDeliveryError)
    return {
      id: deliveryId,
      priorAttempts: error.attemptCount,
      delayMs: retryDelay(retryDelaysMs, error.attemptCount),
    };
  if (error instanceof DeferredDeliveryError)
    return { id: deliveryId, priorAttempts: 0, delayMs: error.delayMs, deferred: true };
  return { id: deliveryId, priorAttempts: 0, delayMs: retryDelay(retryDelaysMs, 1) };
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

/**
 * Bull's backoff for delivery jobs: a deferred job waits what its deferral asks; a failed attempt waits
 * the schedule's delay for the delivery's attempt count; any other error (PostgreSQL unreachable while
 * recording, say) the delay for the job's run count.
 */
export function deliveryBackoff(
  retryDelaysMs: number[],
  attemptsMade: number,
  error: Error,
  options?: DeliveryBackoffOptions,
): number {
  if (error instanceof DeferredDeliveryError) return error.delayMs;
  if (error instanceof RetryableDeliveryError) return retryDelay(retryDelaysMs, error.attemptCount);
  return retryDelay(retryDelaysMs, attemptsMade, options);
}
