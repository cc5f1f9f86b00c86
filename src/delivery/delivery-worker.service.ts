import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { ALERT_QUEUE, type AlertJob } from '../mail/alert-jobs';
import { AlertMailer } from '../mail/alert-mailer.service';
import { DELIVERY_CONCURRENCY, DeliveryAttemptService } from './delivery-attempt.service';
import {
  DELIVERY_QUEUE,
  DeferredDeliveryError,
  type DeliveryJob,
  priorAttemptsOf,
  RetryableDeliveryError,
} from './delivery-jobs';
const ALERT_CONCURRENCY = 2;

/**
 * The queue processors of a worker process (APP_ROLE `worker` or `all`). A failed attempt with
 * retries left throws, so Bull schedules the next one with the retry backoff; Bull's stalled-job
 * check hands the job of a killed worker to another one.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap {
  private readonly logger = new Logger(DeliveryWorker.name);

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly deliveries: Queue<DeliveryJob>,
    @InjectQueue(ALERT_QUEUE) private readonly alerts: Queue<AlertJob>,
    private readonly attempts: DeliveryAttemptService,
    private readonly mailer: AlertMailer,
  ) {}

  onApplicationBootstrap(): void {
    void this.deliveries.process(DELIVERY_CONCURRENCY, (job: Job<DeliveryJob>) =>
      this.attempts.attempt(job.data.deliveryId, {
        failedRuns: job.attemptsMade,
        priorAttempts: priorAttemptsOf(job),
      }),
    );
    void this.alerts.process(ALERT_CONCURRENCY, (job: Job<AlertJob>) =>
      this.mailer.sendFor(job.data.endpointId),
    );
    this.deliveries.on('failed', (job: Job<DeliveryJob>, error: Error) => {
      if (!(error instanceof RetryableDeliveryError || error instanceof DeferredDeliveryError))
        this.logger.error({ deliveryId: job.data.deliveryId, err: error }, 'delivery job error');
    });
    this.alerts.on('failed', (job: Job<AlertJob>, error: Error) =>
      this.logger.warn(
        { endpointId: job.data.endpointId, attempt: job.attemptsMade, error: error.message },
        'alert mail failed; will retry',
      ),
    );
  }
}
