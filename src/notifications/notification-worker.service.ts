import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { PeriodicTask } from '../common/periodic-task';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';
import { NotificationDispatcher } from './notification-dispatcher.service';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { NOTIFICATION_QUEUE, type NotificationJob } from '../jobs/notification-jobs';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';

/** Channels sent to at once: each send waits on a remote service (up to DELIVERY_TIMEOUT_MS). */
const NOTIFICATION_CONCURRENCY = 4;
const SWEEP_INTERVAL_MS = 5000;
/** Notifications this late past their due time have probably lost their job (Redis restarted, scheduling failed). */
const OVERDUE_GRACE_S = 10;

/**
 * The notification processor of a worker (APP_ROLE `worker`, or the delivery thread of `all`): sends each
 * channel's outbox (NotificationDispatcher), and every few seconds schedules again the notifications left
 * waiting past their due time, whose job may have been lost with Redis or died with its worker.
 */
@Injectable()
export class NotificationWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(NotificationWorker.name);
  private readonly windowMs: number;
  private readonly sweeps = new PeriodicTask(
    () => this.scheduleOverdue(),
    SWEEP_INTERVAL_MS,
    (error) => this.logger.warn(`notification sweep skipped: ${error.message}`),
  );

  constructor(
    @InjectQueue(NOTIFICATION_QUEUE) private readonly queue: Queue<NotificationJob>,
    private readonly dispatcher: NotificationDispatcher,
    private readonly outbox: NotificationsRepository,
    private readonly scheduler: NotificationScheduler,
    config: ConfigService<Environment, true>,
  ) {
    this.windowMs = config.get('NOTIFICATION_WINDOW_S', { infer: true }) * 1000;
  }

  onApplicationBootstrap(): void {
    void this.queue.process(NOTIFICATION_CONCURRENCY, (job: Job<NotificationJob>) =>
      this.dispatcher.sendFor(job.data.channelId, String(job.id)),
    );
    this.queue.on('failed', (job: Job<NotificationJob>, error: Error) =>
      this.logger.warn(
        { channelId: job.data.channelId, error: error.message },
        'notification job failed; the sweep sends its notifications again',
      ),
    );
    this.sweeps.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.sweeps.stop();
  }

  private async scheduleOverdue(): Promise<void> {
    for (const channelId of await this.outbox.channelsWithOverdueNotifications(
      OVERDUE_GRACE_S,
      this.windowMs,
    ))
      await withRedisTimeout(this.scheduler.schedule(channelId), BACKGROUND_REDIS_TIMEOUT_MS);
  }
}
