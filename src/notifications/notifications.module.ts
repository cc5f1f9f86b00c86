import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { NOTIFICATION_QUEUE } from './notification-jobs';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';
import { Notifier } from './notifier.service';

/**
 * What other modules need to notify a user's channels (`Notifier`), the channels' outbox and the queue that
 * drains it (a failed message is retried on the delivery retry schedule, DELIVERY_RETRY_DELAYS_MS, before
 * it is dropped).
 */
@Module({
  imports: [BullModule.registerQueue({ name: NOTIFICATION_QUEUE })],
  providers: [NotificationsRepository, NotificationScheduler, Notifier],
  exports: [BullModule, NotificationsRepository, NotificationScheduler, Notifier],
})
export class NotificationsModule {}
