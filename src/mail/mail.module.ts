import { MailerModule } from '@nestjs-modules/mailer';
import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { ALERT_QUEUE } from './alert-jobs';
import { AlertMailer } from './alert-mailer.service';
import { AlertScheduler } from './alert-scheduler.service';
import { AlertsRepository } from './alerts.repository';

/** Dead-letter alerts: the outbox, the queue that drains it, and the mail transport (SMTP_URL, or the log). */
@Module({
  imports: [
    BullModule.registerQueue({ name: ALERT_QUEUE }),
    MailerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => ({
        transport: config.get('SMTP_URL', { infer: true }) ?? { jsonTransport: true },
        defaults: { from: config.get('MAIL_FROM', { infer: true }) },
      }),
    }),
  ],
  providers: [AlertsRepository, AlertScheduler, AlertMailer],
  exports: [BullModule, AlertScheduler, AlertMailer, AlertsRepository],
})
export class MailModule {}
