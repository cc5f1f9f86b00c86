import { Module } from '@nestjs/common';
import { NotificationsModule } from '../notifications/notifications.module';
import { AlertMailer } from './alert-mailer.service';
import { AlertScheduler } from './alert-scheduler.service';
import { AlertsRepository } from './alerts.repository';
import { MailTransportModule } from '../outbound/mail-transport.module';

/**
 * Dead-letter alerts: the outbox, the queue that drains it, the mail transport (SMTP_URL, or the log), and
 * the notification channels told about each batch.
 */
@Module({
  imports: [MailTransportModule, NotificationsModule],
  providers: [AlertsRepository, AlertScheduler, AlertMailer],
  exports: [AlertScheduler, AlertMailer, AlertsRepository],
})
export class MailModule {}
