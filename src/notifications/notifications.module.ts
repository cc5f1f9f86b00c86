import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { NOTIFICATION_QUEUE, RETRY_SCHEDULE_BACKOFF } from './notification-jobs';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';
import { Notifier } from './notifier.service';

/**
 * What other modules need to notify a user's channels (`Notifier`), the channels' outbox and the queue that
 * drains it, retried on the delivery retry schedule (DELIVERY_RETRY_DELAYS_MS) before a message is dropped.
 */
@Module({
  imports: [
    BullModule.registerQueueAsync({
      name: NOTIFICATION_QUEUE,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => {
        const delays = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
        return {
          settings: {
            backoffStrategies: {
              [RETRY_SCHEDULE_BACKOFF]: (attemptsMade: number) =>
                delays[Math.min(Math.max(attemptsMade - 1, 0), delays.length - 1)] ?? 0,
            },
          },
        };
      },
    }),
  ],
  providers: [NotificationsRepository, NotificationScheduler, Notifier],
  exports: [BullModule, NotificationsRepository, NotificationScheduler, Notifier],
})
export class NotificationsModule {}
