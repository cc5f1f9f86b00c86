import { MailerModule } from '@nestjs-modules/mailer';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';

/**
 * The mail transport (SMTP_URL, or a JSON transport when unset) behind MailerService: used by the
 * dead-letter alerts and by email notification channels.
 */
@Module({
  imports: [
    MailerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => ({
        transport: config.get('SMTP_URL', { infer: true }) ?? { jsonTransport: true },
        defaults: { from: config.get('MAIL_FROM', { infer: true }) },
      }),
    }),
  ],
  exports: [MailerModule],
})
export class MailTransportModule {}
