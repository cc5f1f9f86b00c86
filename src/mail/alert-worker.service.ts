import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';
import { ALERT_QUEUE, ALERT_WINDOW_MS, type AlertJob } from '../jobs/alert-jobs';
import { OVERDUE_GRACE_S, processJobs, reschedulingSweep } from '../jobs/queue-worker';
import { AlertMailer } from './alert-mailer.service';
import { AlertScheduler } from './alert-scheduler.service';
import { AlertsRepository } from './alerts.repository';

const ALERT_CONCURRENCY = 2;

/**
 * The dead-letter alert processor of a worker (APP_ROLE `worker`, or the delivery thread of `all`): mails
 * each endpoint's unsent alerts (a failed mail is retried by Bull with back-off), and every few seconds
 * schedules again the alerts left unsent past their due time, whose job may have been lost with Redis.
 */
@Injectable()
export class AlertWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AlertWorker.name);
  private readonly sweeps = reschedulingSweep(
    'alert',
    this.logger,
    () => this.alerts.endpointsWithOverdueAlerts(OVERDUE_GRACE_S, ALERT_WINDOW_MS),
    (endpointId) => this.scheduler.schedule(endpointId),
  );

  constructor(
    @InjectQueue(ALERT_QUEUE) private readonly queue: Queue<AlertJob>,
    private readonly mailer: AlertMailer,
    private readonly alerts: AlertsRepository,
    private readonly scheduler: AlertScheduler,
  ) {}

  onApplicationBootstrap(): void {
    processJobs(
      this.queue,
      {
        concurrency: ALERT_CONCURRENCY,
        logger: this.logger,
        failed: 'alert mail failed; will retry',
        fieldsOf: (job) => ({ endpointId: job.data.endpointId, attempt: job.attemptsMade }),
      },
      ({ endpointId }) => this.mailer.sendFor(endpointId),
    );
    this.sweeps.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.sweeps.stop();
  }
}
