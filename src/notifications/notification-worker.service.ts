import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Queue } from 'bull';
import type { Environment } from '../config/environment';
import { NOTIFICATION_QUEUE, type NotificationJob } from '../jobs/notification-jobs';
import { OVERDUE_GRACE_S, processJobs, reschedulingSweep } from '../jobs/queue-worker';
import { NotificationDispatcher } from './notification-dispatcher.service';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';

/** Channels sent to at once: each send waits on a remote service (up to DELIVERY_TIMEOUT_MS). */
const NOTIFICATION_CONCURRENCY = 4;

/**
 * The notification processor of a worker (APP_ROLE `worker`, or the delivery thread of `all`): sends each
 * channel's outbox (NotificationDispatcher), and every few seconds schedules again the notifications left
 * waiting past their due time, whose job may have been lost with Redis or died with its worker.
 */
@Injectable()
export class NotificationWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(NotificationWorker.name);
  private readonly windowMs: number;
  private readonly sweeps = reschedulingSweep(
    'notification',
    this.logger,
    () => this.outbox.channelsWithOverdueNotifications(OVERDUE_GRACE_S, this.windowMs),
    (channelId) => this.scheduler.schedule(channelId),
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
    processJobs(
      this.queue,
      {
        concurrency: NOTIFICATION_CONCURRENCY,
        logger: this.logger,
        failed: 'notification job failed; the sweep sends its notifications again',
        fieldsOf: (job) => ({ channelId: job.data.channelId }),
      },
      (data, job) => this.dispatcher.sendFor(data.channelId, String(job.id)),
    );
    this.sweeps.start();
  }

  onApplicationShutdown(): Promise<void> {
    return this.sweeps.stop();
  }
}
