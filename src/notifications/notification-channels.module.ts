import { Module } from '@nestjs/common';
import { ChannelSenderModule } from './channel-sender.module';
import { NotificationChannelsController } from './notification-channels.controller';
import { NotificationChannelsService } from './notification-channels.service';
import { NotificationsModule } from './notifications.module';

/** The notification channels API: create, list, delete and "send a test". */
@Module({
  imports: [NotificationsModule, ChannelSenderModule],
  controllers: [NotificationChannelsController],
  providers: [NotificationChannelsService],
})
export class NotificationChannelsModule {}
