import { MailerService } from '@nestjs-modules/mailer';
import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { withoutUrlPassword } from '../common/url-password';
import type { Environment } from '../config/environment';
import type { Knex } from '../database/sql';
import type { NotificationEvent } from '../notifications/notification-events';
import { Notifier } from '../notifications/notifier.service';
import { ALERT_WINDOW_MS } from '../jobs/alert-jobs';
import { AlertScheduler } from './alert-scheduler.service';
import { type AlertBatch, AlertsRepository } from './alerts.repository';

/** A dead-letter notification lists at most this many of its batch's events; `count` counts them all. */
const NOTIFIED_EVENTS_LIMIT = 20;
/**
 * A dead-letter mail lists at most this many events, then says how many more: a flood's digest stays a
 * mail of some kilobytes, which an SMTP server takes (a size limit refused would hold every later alert).
 */
export const MAILED_EVENTS_LIMIT = 100;

/** What the account holders' notification channels subscribed to `dead_letter` are told about a batch. */
export function deadLetterNotification(batch: AlertBatch): NotificationEvent {
  return {
    endpointId: batch.endpointId,
    type: 'dead_letter',
    data: {
      endpoint: { id: batch.endpointId, name: batch.endpointName },
      count: batch.alertIds.length,
      events: batch.events.slice(0, NOTIFIED_EVENTS_LIMIT).map((event) => ({
        id: event.eventId,
        method: event.method,
        received_at: event.receivedAt.toISOString(),
        destinations: event.destinations.map((destination) => ({
          url: destination.url,
          response_code: destination.responseCode,
          error: destination.error,
        })),
      })),
    },
  };
}

/** "Ada", "Ada and Grace", "Ada, Grace and Lin". */
function namesText(names: string[]): string {
  return names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * How long a worker's claim on a mail lasts: far beyond what a mail takes with SMTP_TIMEOUTS_MS (a server
 * that hangs fails it within a minute). A worker that died leaves its claim, and the alert sweep has the
 * mail sent again once it runs out; one still sending past it may see its mail sent a second time, with
 * the same Message-ID, so the two are recognisable as one message.
 */
export const ALERT_CLAIM_MS = 5 * 60 * 1000;

/** A mail as given to MailerService. */
interface AlertMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

/**
 * Sends the dead-letter email of one endpoint to its account holders (its owner, or every owner and admin
 * of its team, in one mail): one alert, or a digest of every alert since the last mail, never more than one
 * mail per endpoint per ALERT_WINDOW_MS. No network call happens in a transaction: the mail is claimed in a
 * short one (under the endpoint's lock), sent outside any, and marked sent after, so a slow mail server
 * holds neither a database connection nor the lock. Its Message-ID is the claim's mail id, which a mail
 * sent again after its worker died keeps. An SMTP error ends the claim and throws, the rows stay unsent and Bull retries the job: an
 * outage delays the mail and loses nothing. The holders' notification channels subscribed to `dead_letter`
 * are told about the same batch (their outbox rows are written in the transaction that claims it), and
 * digest it further by channel.
 */
@Injectable()
export class AlertMailer {
  private readonly logger = new Logger(AlertMailer.name);
  private readonly siteUrl: string;
  /** Without SMTP_URL the mail is written to the log instead of being sent. */
  private readonly logOnly: boolean;

  constructor(
    private readonly alerts: AlertsRepository,
    private readonly scheduler: AlertScheduler,
    private readonly mailer: MailerService,
    private readonly notifier: Notifier,
    config: ConfigService<Environment, true>,
  ) {
    this.siteUrl = config.get('SITE_URL', { infer: true }) ?? '';
    this.logOnly = !config.get('SMTP_URL', { infer: true });
  }

  async sendFor(endpointId: string): Promise<void> {
    let notifiedChannels: string[] = [];
    const claimed = await this.alerts.withEndpointLock(
      endpointId,
      async (trx): Promise<{ batch?: AlertBatch; postponedUntil?: Date }> => {
        // Another worker's mail covers the window already: look again once its claim is over.
        const claimedUntil = await this.alerts.claimedUntil(trx, endpointId);
        if (claimedUntil) return { postponedUntil: claimedUntil };
        const lastSent = await this.alerts.lastSentAt(trx, endpointId);
        const windowEnd = lastSent ? new Date(lastSent.getTime() + ALERT_WINDOW_MS) : null;
        if (windowEnd && windowEnd.getTime() > Date.now()) return { postponedUntil: windowEnd };
        const batch = await this.alerts.claim(trx, endpointId, MAILED_EVENTS_LIMIT, ALERT_CLAIM_MS);
        if (!batch) return {};
        // The channels are told first, and whatever becomes of the mail: SMTP down delays the mail only.
        notifiedChannels = await this.notifyChannels(trx, batch);
        return { batch };
      },
    );
    await this.notifier.dispatch(notifiedChannels);
    if (claimed.postponedUntil) await this.scheduler.schedule(endpointId, claimed.postponedUntil);
    if (claimed.batch) await this.send(claimed.batch);
  }

  /** Sends a claimed mail, outside any transaction, and marks its alerts sent. */
  private async send(batch: AlertBatch): Promise<void> {
    const mail = this.compose(batch);
    try {
      await this.mailer.sendMail(mail);
    } catch (error) {
      // The alerts stay unsent and the job is retried (Bull's back-off): the mail goes when SMTP is back.
      await this.alerts.release(batch.mailId);
      throw error;
    }
    if (this.logOnly)
      this.logger.warn(
        { to: mail.to, subject: mail.subject, text: mail.text },
        'SMTP_URL is not set: alert logged',
      );
    await this.alerts.markSent(batch.mailId);
    this.logger.log(
      { endpointId: batch.endpointId, events: batch.alertIds.length, to: mail.to, messageId: mail.messageId },
      'dead-letter alert sent',
    );
  }

  /** Tells the channels about the batch's alerts they were not told about yet; resolves with their ids. */
  private async notifyChannels(trx: Knex, batch: AlertBatch): Promise<string[]> {
    if (batch.unnotifiedIds.length === 0) return [];
    const unnotified = new Set(batch.unnotifiedIds);
    const channelIds = await this.notifier.record(
      trx,
      deadLetterNotification({
        ...batch,
        alertIds: batch.unnotifiedIds,
        events: batch.events.filter((event) => unnotified.has(event.alertId)),
      }),
    );
    await this.alerts.markNotified(trx, batch.unnotifiedIds);
    return channelIds;
  }

  private eventLink(endpointId: string, eventId: string): string {
    return `${this.siteUrl}/#/endpoints/${endpointId}/events/${eventId}`;
  }

  private compose(batch: AlertBatch): AlertMail {
    const count = batch.alertIds.length;
    const unlisted = count - batch.events.length;
    const subject =
      count === 1
        ? `[Hooktrail] Webhook dead-lettered on "${batch.endpointName}"`
        : `[Hooktrail] ${count} webhooks dead-lettered on "${batch.endpointName}"`;
    const blocks = batch.events.map((event) => {
      const destinations = event.destinations.map(
        (destination) =>
          `  - ${withoutUrlPassword(destination.url)}: last response ${destination.responseCode ?? 'none'}${destination.error ? ` (${destination.error})` : ''}`,
      );
      return [
        `Event ${event.eventId} (${event.method}), received ${event.receivedAt.toISOString()}`,
        ...destinations,
        `  ${this.eventLink(batch.endpointId, event.eventId)}`,
      ].join('\n');
    });
    const intro =
      count === 1
        ? `A webhook captured by your endpoint "${batch.endpointName}" could not be delivered, so it is now dead-lettered: below, each destination's last response (its retries ran out, or the destination was removed or switched off).`
        : `${count} webhooks captured by your endpoint "${batch.endpointName}" could not be delivered, so they are now dead-lettered: below, each destination's last response (its retries ran out, or the destination was removed or switched off).`;
    if (unlisted > 0)
      blocks.push(
        `…and ${unlisted} more: ${this.siteUrl}/#/endpoints/${batch.endpointId}?status=dead_letter lists them all.`,
      );
    const outro = 'The events are kept: fix the destination, then replay them from the dashboard or the API.';
    const greeting = `Hi ${namesText(batch.recipients.map((recipient) => recipient.name))},`;
    const text = [greeting, '', intro, '', ...blocks.flatMap((block) => [block, '']), outro].join('\n');
    const html = `<p>${escapeHtml(greeting)}</p><p>${escapeHtml(intro)}</p>${blocks
      .map((block) => `<pre>${escapeHtml(block)}</pre>`)
      .join('')}<p>${escapeHtml(outro)}</p>`;
    return {
      to: batch.recipients.map((recipient) => recipient.email),
      subject,
      text,
      html,
      messageId: `<dead-letter-alert.${batch.mailId}@${new URL(this.siteUrl).hostname}>`,
    };
  }
}
