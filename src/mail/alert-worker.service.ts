import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { PeriodicTask } from '../common/periodic-task';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';
import { ALERT_QUEUE, ALERT_WINDOW_MS, type AlertJob } from '../jobs/alert-jobs';
import { AlertMailer } from './alert-mailer.service';
import { AlertScheduler } from './alert-scheduler.service';
import { AlertsRepository } from './alerts.repository';

const ALERT_CONCURRENCY = 2;
const SWEEP_INTERVAL_MS = 5000;
/** An alert this late past its due time has probably lost its job (Redis restarted, scheduling failed). */
const OVERDUE_GRACE_S = 10;

/**
 * The dead-letter alert processor of a worker (APP_ROLE `worker`, or the delivery thread of `all`): mails
 * each endpoint's unsent alerts (a failed mail is retried by Bull with back-off), and every few seconds
 * schedules again the alerts left unsent past their due time, whose job may have been lost with Redis.
 */
@Injectable()
export class AlertWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AlertWorker.name);
  private readonly sweeps = new PeriodicTask(
    () => this.scheduleOverdue(),
    SWEEP_INTERVAL_MS,
    (error) => this.logger.warn(`alert sweep skipped: ${error.message}`),
  );

  constructor(
    @InjectQueue(ALERT_QUEUE) private readonly queue: Queue<AlertJob>,
    private readonly mailer: AlertMailer,
    private readonly alerts: AlertsRepository,
    private readonly scheduler: AlertScheduler,
  ) {}

  onApplicationBootstrap(): void {
    void this.queue.process(ALERT_CONCURRENCY, (job: Job<AlertJob>) =>
      this.mailer.sendFor(job.data.endpointId),
    );
    this.queue.on('failed', (job: Job<AlertJob>, error: Error) =>
      this.logger.warn(
        { endpointId: job.data.endpointId, attempt: job.attemptsMade, error: error.message },
        'alert mail failed; will retry',
      ),
    );
    this.sweeps.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.sweeps.stop();
  }

  private async scheduleOverdue(): Promise<void> {
    for (const endpointId of await this.alerts.endpointsWithOverdueAlerts(OVERDUE_GRACE_S, ALERT_WINDOW_MS))
      await withRedisTimeout(this.scheduler.schedule(endpointId), BACKGROUND_REDIS_TIMEOUT_MS);
  }
}
