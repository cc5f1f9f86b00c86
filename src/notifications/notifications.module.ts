import { Module } from '@nestjs/common';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';
import { Notifier } from './notifier.service';

/**
 * What other modules need to notify a user's channels (`Notifier`), the channels' outbox and the queue that
 * drains it (a failed message is retried on the delivery retry schedule, DELIVERY_RETRY_DELAYS_MS, before
 * it is dropped).
 */
@Module({
  providers: [NotificationsRepository, NotificationScheduler, Notifier],
  exports: [NotificationsRepository, NotificationScheduler, Notifier],
})
export class NotificationsModule {}
