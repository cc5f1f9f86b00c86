import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { DELIVERY_QUEUE, type DeliveryJob, type DispatchJob } from '../jobs/delivery-jobs';
import { DeliveryQueue } from './delivery-queue.service';
import { type DueDelivery, OutboxRepository } from './outbox.repository';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';
import { OVERDUE_GRACE_S, sweepEvery } from '../jobs/queue-worker';

/** After a look, the sweeper leaves a delivery alone this long (its job may just be queued behind others). */
const RECHECK_AFTER_S = 30;
const SWEEP_BATCH = 500;
/** At most this many batches in one sweep (10,000 deliveries); the next sweep goes on. */
const MAX_BATCHES_PER_SWEEP = 20;

/**
 * Drains the outbox: deliveries the database still owes an attempt and whose job is not in Redis
 * (enqueue failed while Redis was down, Redis restarted without its data, a job exhausted by stalls)
 * are enqueued again, continuing their retry schedule. (Overdue dead-letter alerts are the AlertWorker's.)
 */
@Injectable()
export class DeliverySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliverySweeper.name);
  private readonly sweeps = sweepEvery('delivery', this.logger, () => this.sweep());

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob | DispatchJob>,
    private readonly producer: DeliveryQueue,
    private readonly deliveries: OutboxRepository,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.sweeps.stop();
  }

  async sweep(): Promise<void> {
    // After an outage, batch after batch of deliveries lost their jobs: take them all now, not one batch
    // every interval. A full batch whose jobs are all in Redis (a backlog) ends the round.
    for (let batch = 0; batch < MAX_BATCHES_PER_SWEEP; batch++) {
      const { overdue, lost } = await this.reenqueueLost();
      if (overdue < SWEEP_BATCH || lost === 0) break;
    }
  }

  /** Re-enqueues one batch of overdue deliveries whose job is gone; counts what it looked at and re-enqueued. */
  private async reenqueueLost(): Promise<{ overdue: number; lost: number }> {
    const overdue = await this.deliveries.findOverdue(OVERDUE_GRACE_S, SWEEP_BATCH);
    if (overdue.length === 0) return { overdue: 0, lost: 0 };
    const { jobless, failedJobs } = await withRedisTimeout(
      this.joblessOf(overdue),
      BACKGROUND_REDIS_TIMEOUT_MS,
    );
    // A job may have finished its delivery, and gone, while Redis was read (in a backlog, the oldest
    // overdue deliveries are the ones the worker is on): only those still owed the same attempt lost theirs.
    const lost = await this.deliveries.stillOwed(jobless);
    await withRedisTimeout(this.reenqueue(lost, failedJobs), BACKGROUND_REDIS_TIMEOUT_MS);
    await this.deliveries.postpone(
      overdue.map((delivery) => delivery.id),
      RECHECK_AFTER_S,
    );
    if (lost.length > 0)
      this.logger.warn({ count: lost.length }, 're-enqueued deliveries whose job was lost');
    return { overdue: overdue.length, lost: lost.length };
  }

  /**
   * The deliveries that have no live job: neither one of their own nor a dispatch job they wait in (a
   * failed job is not live), and the failed own jobs found, by delivery id. Every look is sent at once, not
   * one round trip after another: a backlog's Redis answers slowly, and the look is bounded.
   */
  private async joblessOf(
    overdue: DueDelivery[],
  ): Promise<{ jobless: DueDelivery[]; failedJobs: Map<string, Job> }> {
    const ids = overdue.map((delivery) => delivery.id);
    const [own, dispatches] = await Promise.all([
      Promise.all(
        ids.map(async (id) => {
          const job = await this.queue.getJob(id);
          return { job, live: await live(job) };
        }),
      ),
      this.producer.dispatchesOf(ids),
    ]);
    const dispatchLive = new Map(
      await Promise.all(
        [...new Set(dispatches.filter((jobId) => jobId !== undefined))].map(
          async (jobId) => [jobId, await live(await this.queue.getJob(jobId))] as const,
        ),
      ),
    );
    const failedJobs = new Map<string, Job>();
    for (const [index, { job, live: running }] of own.entries())
      if (job && !running) failedJobs.set(ids[index], job);
    const jobless = overdue.filter((_delivery, index) => {
      const dispatch = dispatches[index];
      return !own[index].live && !(dispatch !== undefined && dispatchLive.get(dispatch));
    });
    return { jobless, failedJobs };
  }

  /**
   * Enqueues lost deliveries again, continuing their retry schedule. Their failed jobs (as the look found
   * them) are removed first (a job's id stays taken until then) and their dispatch entries forgotten.
   */
  private async reenqueue(lost: DueDelivery[], failedJobs: Map<string, Job>): Promise<void> {
    if (lost.length === 0) return;
    const ids = lost.map((delivery) => delivery.id);
    await Promise.all(ids.map((id) => failedJobs.get(id)?.remove()));
    await this.producer.forgetDispatches(ids);
    await this.producer.enqueue(
      lost.map((delivery) => ({ id: delivery.id, priorAttempts: delivery.attemptCount })),
    );
  }
}

/** Whether a job is there and may still run (a failed one will not). */
async function live(job: Job | null | undefined): Promise<boolean> {
  return !!job && !(await job.isFailed());
}
