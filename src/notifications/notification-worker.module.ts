import { Module } from '@nestjs/common';
import { ChannelSenderModule } from './channel-sender.module';
import { NotificationDispatcher } from './notification-dispatcher.service';
import { NotificationWorker } from './notification-worker.service';
import { NotificationsModule } from './notifications.module';

/** What a worker runs for notification channels: the queue processor and the sweep of overdue notifications. */
@Module({
  imports: [NotificationsModule, ChannelSenderModule],
  providers: [NotificationDispatcher, NotificationWorker],
})
export class NotificationWorkerModule {}
