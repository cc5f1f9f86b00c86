import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import { DELIVERY_QUEUE, type DeliveryJob } from './delivery-jobs';
import { DeliveryQueue } from './delivery-queue.service';
import { OutboxRepository } from './outbox.repository';
import { PeriodicTask } from '../common/periodic-task';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';

const SWEEP_INTERVAL_MS = 5000;
/** A delivery this late past its due time has probably lost its job (Redis restarted, enqueue failed). */
const OVERDUE_GRACE_S = 10;
/** After a look, the sweeper leaves a delivery alone this long (its job may just be queued behind others). */
const RECHECK_AFTER_S = 30;
const SWEEP_BATCH = 500;
/** At most this many batches in one sweep (10,000 deliveries); the next sweep goes on. */
const MAX_BATCHES_PER_SWEEP = 20;

/**
 * Drains the outbox: deliveries the database still owes an attempt and whose job is not in Redis
 * (enqueue failed while Redis was down, Redis restarted without its data, a job exhausted by stalls)
 * are enqueued again, continuing their retry schedule. It also folds the event-count deltas of busy
 * endpoints. (Overdue dead-letter alerts are the AlertWorker's.)
 */
@Injectable()
export class DeliverySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliverySweeper.name);
  private readonly sweeps = new PeriodicTask(
    () => this.sweep(),
    SWEEP_INTERVAL_MS,
    (error) => this.logger.warn(`sweep skipped: ${error.message}`),
  );

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob>,
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
    await this.deliveries.foldEventCounts();
  }

  /** Re-enqueues one batch of overdue deliveries whose job is gone; counts what it looked at and re-enqueued. */
  private async reenqueueLost(): Promise<{ overdue: number; lost: number }> {
    const overdue = await this.deliveries.findOverdue(OVERDUE_GRACE_S, SWEEP_BATCH);
    if (overdue.length === 0) return { overdue: 0, lost: 0 };
    const jobs = await withRedisTimeout(
      Promise.all(overdue.map((delivery) => this.queue.getJob(delivery.id))),
      BACKGROUND_REDIS_TIMEOUT_MS,
    );
    const lost = [];
    for (const [index, job] of jobs.entries()) {
      if (job && !(await job.isFailed())) continue;
      await job?.remove();
      lost.push({ id: overdue[index].id, priorAttempts: overdue[index].attemptCount });
    }
    await withRedisTimeout(this.producer.enqueue(lost), BACKGROUND_REDIS_TIMEOUT_MS);
    await this.deliveries.postpone(
      overdue.map((delivery) => delivery.id),
      RECHECK_AFTER_S,
    );
    if (lost.length > 0)
      this.logger.warn({ count: lost.length }, 're-enqueued deliveries whose job was lost');
    return { overdue: overdue.length, lost: lost.length };
  }
}
