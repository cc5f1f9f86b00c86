import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { DELIVERY_CONCURRENCY, DeliveryAttemptService } from './delivery-attempt.service';
import {
  DELIVERY_QUEUE,
  DeferredDeliveryError,
  type DeliveryJob,
  priorAttemptsOf,
  RetryableDeliveryError,
} from './delivery-jobs';

/**
 * The delivery processor of a worker (APP_ROLE `worker`, or the delivery thread of `all`). A failed
 * attempt with retries left throws, so Bull schedules the next one with the retry backoff; Bull's
 * stalled-job check hands the job of a killed worker to another one.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap {
  private readonly logger = new Logger(DeliveryWorker.name);

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly deliveries: Queue<DeliveryJob>,
    private readonly attempts: DeliveryAttemptService,
  ) {}

  onApplicationBootstrap(): void {
    void this.deliveries.process(DELIVERY_CONCURRENCY, (job: Job<DeliveryJob>) =>
      this.attempts.attempt(job.data.deliveryId, {
        failedRuns: job.attemptsMade,
        priorAttempts: priorAttemptsOf(job),
      }),
    );
    this.deliveries.on('failed', (job: Job<DeliveryJob>, error: Error) => {
      if (!(error instanceof RetryableDeliveryError || error instanceof DeferredDeliveryError))
        this.logger.error({ deliveryId: job.data.deliveryId, err: error }, 'delivery job error');
    });
  }
}
