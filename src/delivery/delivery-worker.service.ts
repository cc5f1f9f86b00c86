import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Job, Queue } from 'bull';
import { Places } from '../common/places';
import type { Environment } from '../config/environment';
import { DELIVERY_CONCURRENCY, DeliveryAttemptService } from './delivery-attempt.service';
import {
  continuationOf,
  DELIVERY_QUEUE,
  DeferredDeliveryError,
  DISPATCH_JOB,
  type DeliveryJob,
  type DispatchJob,
  priorAttemptsOf,
  RetryableDeliveryError,
} from '../jobs/delivery-jobs';
import { DeliveryQueue } from './delivery-queue.service';

/**
 * The delivery processor of a worker (APP_ROLE `worker`, or the delivery thread of `all`). A dispatch job
 * makes the first attempts of its deliveries side by side; one that cannot finish there continues in a job
 * of its own. A failed attempt with retries left throws, so Bull schedules the next one with the retry
 * backoff; Bull's stalled-job check hands the job of a killed worker to another one.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly retryDelaysMs: number[];
  /**
   * Deliveries of dispatch jobs loaded or being sent at once: their bodies are in memory until their request
   * ends. Recording an outcome, which needs no body, waits outside this bound.
   */
  private readonly dispatched = new Places(DELIVERY_CONCURRENCY);

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob | DispatchJob>,
    private readonly producer: DeliveryQueue,
    private readonly attempts: DeliveryAttemptService,
    config: ConfigService<Environment, true>,
  ) {
    this.retryDelaysMs = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
  }

  onApplicationBootstrap(): void {
    void this.queue.process('*', DELIVERY_CONCURRENCY, (job: Job<DeliveryJob | DispatchJob>) =>
      job.name === DISPATCH_JOB
        ? this.dispatch((job.data as DispatchJob).deliveryIds)
        : this.attempt(job as Job<DeliveryJob>),
    );
    this.queue.on('failed', (job: Job<DeliveryJob | DispatchJob>, error: Error) => {
      if (!(error instanceof RetryableDeliveryError || error instanceof DeferredDeliveryError))
        this.logger.error({ jobId: job.id, err: error }, 'delivery job error');
    });
  }

  private attempt(job: Job<DeliveryJob>): Promise<void> {
    return this.attempts.attempt(job.data.deliveryId, {
      // A job a dispatch deferred comes back from that deferral on its first run.
      failedRuns: job.attemptsMade + (job.data.deferred ? 1 : 0),
      priorAttempts: priorAttemptsOf(job),
    });
  }

  /**
   * The first attempts of a dispatch job's deliveries, in order. The job waits for a place with one
   * delivery at a time, not with all of them (a backlog keeps up to DELIVERY_CONCURRENCY jobs active: their
   * deliveries' waits were a heap of their own), and keeps its turn: its next delivery waits ahead of the
   * jobs after it, so places go to the oldest job first, and a batch's deliveries, stored side by side, are
   * recorded side by side. One that ends with a retry due, a deferral or an error is enqueued at once as a
   * job of its own, which carries it on. A delivery already attempted (the job runs again after its worker
   * died) is left to its own job, or to the sweeper.
   */
  private async dispatch(deliveryIds: string[]): Promise<void> {
    const started: Promise<void>[] = [];
    for (const deliveryId of deliveryIds) {
      await (started.length === 0 ? this.dispatched.acquire() : this.dispatched.acquireAhead());
      started.push(this.dispatchOne(deliveryId));
    }
    const outcomes = await Promise.allSettled(started);
    // One whose continuation could not be enqueued (Redis away) stays mapped to this job, which fails:
    // the sweeper finds it overdue and lost.
    await this.producer.forgetDispatches(
      deliveryIds.filter((_id, index) => outcomes[index].status === 'fulfilled'),
    );
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** A dispatched delivery's first attempt, on a place it holds until its request ends (or its attempt). */
  private async dispatchOne(deliveryId: string): Promise<void> {
    let unfinished: unknown;
    let placeHeld = true;
    const release = () => {
      if (placeHeld) this.dispatched.release();
      placeHeld = false;
    };
    try {
      await this.attempts.attempt(deliveryId, {
        failedRuns: 0,
        priorAttempts: 0,
        firstOnly: true,
        onSent: release,
      });
      return;
    } catch (error) {
      unfinished = error;
    } finally {
      release();
    }
    await this.producer.enqueue([continuationOf(deliveryId, unfinished, this.retryDelaysMs)]);
  }
}
