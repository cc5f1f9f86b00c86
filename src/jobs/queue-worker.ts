import type { Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { PeriodicTask } from '../common/periodic-task';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';

/**
 * How often a worker looks for work left without a job: Redis lost it (restarted without its data),
 * scheduling it failed while Redis was down, or its worker died.
 */
export const SWEEP_INTERVAL_MS = 5000;
/** Work this late past its due time has probably lost its job: the sweep gives it one again. */
export const OVERDUE_GRACE_S = 10;

/** How a worker runs one queue's jobs. */
export interface JobProcessing<T> {
  /** Jobs run at once by this process. */
  concurrency: number;
  logger: Logger;
  /** The warning logged when a job fails (Bull retries it if its options say so). */
  failed: string;
  /** The fields that name a failed job in that warning. */
  fieldsOf: (job: Job<T>) => Record<string, unknown>;
}

/** Runs each job of `queue` with `run(job.data, job)`, and logs a failed one as `processing` says. */
export function processJobs<T>(
  queue: Queue<T>,
  processing: JobProcessing<T>,
  run: (data: T, job: Job<T>) => Promise<unknown>,
): void {
  const { concurrency, logger, failed, fieldsOf } = processing;
  void queue.process(concurrency, (job: Job<T>) => run(job.data, job));
  queue.on('failed', (job: Job<T>, error: Error) =>
    logger.warn({ ...fieldsOf(job), error: error.message }, failed),
  );
}

/**
 * Runs `sweep` every SWEEP_INTERVAL_MS once started (never two at once); a failed sweep is a
 * "<what> sweep skipped" warning, and the next one runs as usual.
 */
export function sweepEvery(what: string, logger: Logger, sweep: () => Promise<void>): PeriodicTask {
  return new PeriodicTask(sweep, SWEEP_INTERVAL_MS, (error) =>
    logger.warn(`${what} sweep skipped: ${error.message}`),
  );
}

/**
 * A sweep that gives a job again to each key whose work is overdue: `schedule(key)` for each key
 * `overdue()` finds, one after the other, each bounded by BACKGROUND_REDIS_TIMEOUT_MS (a Redis that does not
 * answer ends the sweep instead of holding it).
 */
export function reschedulingSweep(
  what: string,
  logger: Logger,
  overdue: () => Promise<Iterable<string>>,
  schedule: (key: string) => Promise<unknown>,
): PeriodicTask {
  return sweepEvery(what, logger, async () => {
    for (const key of await overdue()) await withRedisTimeout(schedule(key), BACKGROUND_REDIS_TIMEOUT_MS);
  });
}
