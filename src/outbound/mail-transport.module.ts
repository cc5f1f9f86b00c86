import { MailerModule } from '@nestjs-modules/mailer';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';

/**
 * nodemailer's own time-outs suit a bulk mailer (2 minutes to connect, 30 s for the greeting, 10 minutes of
 * silence); here a dead-letter alert holds its claim (ALERT_CLAIM_MS) while its mail is sent, a
 * notification its channel's, and an invitation its HTTP request. An SMTP server that hangs fails
 * them within seconds instead: the alert and the notification are retried, the invitation answers 503.
 */
export const SMTP_TIMEOUTS_MS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

/** SMTP_URL with SMTP_TIMEOUTS_MS as query parameters, where it does not set them itself (they win). */
export function smtpTransportUrl(smtpUrl: string): string {
  const url = new URL(smtpUrl);
  for (const [name, ms] of Object.entries(SMTP_TIMEOUTS_MS))
    if (!url.searchParams.has(name)) url.searchParams.set(name, String(ms));
  return url.toString();
}

/**
 * The mail transport (SMTP_URL, or a JSON transport when unset) behind MailerService: used by the
 * dead-letter alerts and by email notification channels.
 */
@Module({
  imports: [
    MailerModule.forRootAsync({
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => {
        const smtpUrl = config.get('SMTP_URL', { infer: true });
        return {
          transport: smtpUrl ? smtpTransportUrl(smtpUrl) : { jsonTransport: true },
          defaults: { from: config.get('MAIL_FROM', { infer: true }) },
        };
      },
    }),
  ],
  exports: [MailerModule],
})
export class MailTransportModule {}
