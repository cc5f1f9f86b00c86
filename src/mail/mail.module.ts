import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { NotificationsModule } from '../notifications/notifications.module';
import { ALERT_QUEUE } from './alert-jobs';
import { AlertMailer } from './alert-mailer.service';
import { AlertScheduler } from './alert-scheduler.service';
import { AlertsRepository } from './alerts.repository';
import { MailTransportModule } from './mail-transport.module';

/**
 * Dead-letter alerts: the outbox, the queue that drains it, the mail transport (SMTP_URL, or the log), and
 * the notification channels told about each batch.
 */
@Module({
  imports: [BullModule.registerQueue({ name: ALERT_QUEUE }), MailTransportModule, NotificationsModule],
  providers: [AlertsRepository, AlertScheduler, AlertMailer],
  exports: [BullModule, AlertScheduler, AlertMailer, AlertsRepository],
})
export class MailModule {}
