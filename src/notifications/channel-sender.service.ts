import { MailerService } from '@nestjs-modules/mailer';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { DeliverySender } from '../outbound/delivery-sender';
import { signPayload } from '../outbound/signature-signer';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import { chatBody, type ChannelMessage } from './channel-messages';
import type { NotificationChannel } from './notification-channel';

/** The HTTP client of notification channels: the delivery engine's, on pools of its own (same SSRF guard). */
export const CHANNEL_HTTP = Symbol('CHANNEL_HTTP');

/** A message a channel did not take, with the reason shown in the dashboard. */
export class ChannelSendError extends Error {}

/**
 * Sends one message to one channel: an email, Slack's `{text}`, Discord's `{content}`, or the webhook
 * body signed with our `hooktrail-*` headers under the channel's secret. Throws ChannelSendError when the
 * channel did not take it (any answer but 2xx, a time-out, a refused private address, an SMTP error).
 */
@Injectable()
export class ChannelSender {
  /** The right-hand side of a mail's Message-ID: this service's host name. */
  private readonly mailIdHost: string;

  constructor(
    @Inject(CHANNEL_HTTP) private readonly http: DeliverySender,
    private readonly mailer: MailerService,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
    config: ConfigService<Environment, true>,
  ) {
    this.mailIdHost = new URL(config.get('SITE_URL', { infer: true }) ?? 'http://localhost').hostname;
  }

  /**
   * `messageId` is the webhook's `hooktrail-id`, or the mail's Message-ID: the same every time one message
   * is sent again (a retry, or another worker's after the first died sending it).
   */
  async send(channel: NotificationChannel, message: ChannelMessage, messageId: string): Promise<void> {
    if (channel.type === 'email') {
      await this.mailer
        .sendMail({
          to: channel.target,
          subject: message.subject,
          text: message.text,
          messageId: `<${messageId}@${this.mailIdHost}>`,
        })
        .catch((error: Error) => {
          throw new ChannelSendError(`email not sent: ${error.message}`);
        });
      return;
    }
    if (channel.type === 'webhook' && !message.webhookBody)
      throw new ChannelSendError('a webhook channel takes one notification per message, not a digest');
    const body = Buffer.from(
      JSON.stringify(channel.type === 'webhook' ? message.webhookBody : chatBody(channel.type, message)),
    );
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Hooktrail' };
    if (channel.type === 'webhook') {
      const timestamp = Math.floor(Date.now() / 1000);
      headers['hooktrail-id'] = messageId;
      headers['hooktrail-timestamp'] = String(timestamp);
      if (channel.sealedSecret)
        headers['hooktrail-signature'] = signPayload(
          this.secrets.open(channel.sealedSecret),
          messageId,
          timestamp,
          body,
        );
    }
    const outcome = await this.http.send({ method: 'POST', url: channel.target, headers, body });
    const ok = outcome.responseCode !== null && outcome.responseCode >= 200 && outcome.responseCode < 300;
    if (ok) return;
    throw new ChannelSendError(
      outcome.error ??
        `HTTP ${outcome.responseCode}${outcome.responseBody ? `: ${outcome.responseBody.slice(0, 200)}` : ''}`,
    );
  }
}
