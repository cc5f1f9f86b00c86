import { createHash } from 'node:crypto';
import type { PendingNotification } from './notification-channel';

/** Discord refuses a `content` longer than this. */
export const DISCORD_CONTENT_LIMIT = 2000;
/** A chat message lists at most this many notifications; it counts the rest. */
const CHAT_LINE_LIMIT = 20;

/** The webhook channel's JSON body. */
export interface WebhookNotificationBody {
  type: string;
  data: Record<string, unknown>;
  created_at: string;
}

/**
 * The `hooktrail-id` of a channel's message: the same for the same notifications (a retry of the message
 * sent again), another as soon as the message holds others (a retry after more were gathered, which is
 * another message, that a receiver de-duplicating by id must not drop).
 */
export function messageId(channelId: string, notificationIds: readonly string[]): string {
  const digest = createHash('sha256')
    .update([...notificationIds].sort().join(','))
    .digest('base64url');
  return `ntf_${channelId}_${digest.slice(0, 22)}`;
}

/**
 * One message for a channel, in each of the forms its type needs: a webhook channel's is always one
 * notification (`webhookBody`), never a digest, which chats and mail get.
 */
export interface ChannelMessage {
  subject: string;
  text: string;
  webhookBody?: WebhookNotificationBody;
}

type Json = Record<string, unknown>;

const object = (value: unknown): Json =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
const text = (value: unknown, fallback: string): string =>
  typeof value === 'string' && value !== '' ? value : fallback;
const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** What one notification is about (a title), and where in the dashboard to look. */
export function describeNotification(
  notification: Pick<PendingNotification, 'type' | 'data'>,
  siteUrl: string,
): { title: string; link: string } {
  const data = notification.data;
  switch (notification.type) {
    case 'dead_letter': {
      const endpoint = object(data.endpoint);
      const count = typeof data.count === 'number' ? data.count : 1;
      return {
        title: `${plural(count, 'webhook', 'webhooks')} dead-lettered on "${text(endpoint.name, 'an endpoint')}"`,
        link: `${siteUrl}/#/endpoints/${text(endpoint.id, '')}`,
      };
    }
    case 'issue.opened':
    case 'issue.resolved': {
      const issue = object(data.issue);
      const destination = object(issue.destination);
      const verb = notification.type === 'issue.opened' ? 'Issue opened' : 'Issue resolved';
      return {
        title: `${verb} on ${text(destination.url, 'a destination')}: ${text(issue.summary, text(issue.kind, 'delivery failures'))}`,
        link: `${siteUrl}/#/issues`,
      };
    }
    case 'destination.paused': {
      const destination = object(data.destination);
      const reason = text(destination.paused_reason, '');
      return {
        title: `Destination ${text(destination.url, '')} paused${reason ? ` (${reason})` : ''}; its deliveries are held until it is resumed`,
        link: `${siteUrl}/#/endpoints/${text(data.endpoint_id, '')}`,
      };
    }
  }
}

const line = ({ title, link }: { title: string; link: string }) => `${title} — ${link}`;

/**
 * The message for what a channel's outbox held: the notification itself when it is alone (the webhook body
 * `{type, data, created_at}`), else one digest listing them for a chat or a mail.
 */
export function composeMessage(notifications: PendingNotification[], siteUrl: string): ChannelMessage {
  const described = notifications.map((notification) => describeNotification(notification, siteUrl));
  const lines = described.map(line);
  if (notifications.length === 1) {
    const [notification] = notifications;
    return {
      subject: `[Hooktrail] ${described[0].title}`,
      text: lines[0],
      webhookBody: {
        type: notification.type,
        data: notification.data,
        created_at: notification.createdAt.toISOString(),
      },
    };
  }
  const deadLetters = notifications
    .filter((notification) => notification.type === 'dead_letter')
    .reduce(
      (sum, notification) =>
        sum + (typeof notification.data.count === 'number' ? notification.data.count : 1),
      0,
    );
  const summary = `${plural(notifications.length, 'notification', 'notifications')}${deadLetters > 0 ? ` (${plural(deadLetters, 'webhook', 'webhooks')} dead-lettered)` : ''}`;
  const shown = lines.slice(0, CHAT_LINE_LIMIT).map((line) => `• ${line}`);
  const more = lines.length > CHAT_LINE_LIMIT ? [`…and ${lines.length - CHAT_LINE_LIMIT} more`] : [];
  return {
    subject: `[Hooktrail] ${summary}`,
    text: [`Hooktrail: ${summary} since ${notifications[0].createdAt.toISOString()}`, ...shown, ...more].join(
      '\n',
    ),
  };
}

/** The message the "send a test" button sends. */
export function testMessage(channelId: string, now = new Date()): ChannelMessage {
  const line = 'Test notification from Hooktrail: this channel works.';
  return {
    subject: '[Hooktrail] Test notification',
    text: line,
    webhookBody: {
      type: 'test',
      data: { channel_id: channelId, message: line },
      created_at: now.toISOString(),
    },
  };
}

/** Slack's `{text}` or Discord's `{content}` (cut to what Discord accepts). */
export function chatBody(type: 'slack' | 'discord', message: ChannelMessage): Record<string, string> {
  if (type === 'slack') return { text: message.text };
  const content =
    message.text.length > DISCORD_CONTENT_LIMIT
      ? `${message.text.slice(0, DISCORD_CONTENT_LIMIT - 1)}…`
      : message.text;
  return { content };
}
