import { localTime } from './format';
import type { NotificationChannel } from './types';

type ChannelType = NotificationChannel['type'];
type NotificationEventType = NotificationChannel['events'][number];

/** Each type of channel: its name, and what its target is. */
export const CHANNEL_TYPE_TEXT: Record<
  ChannelType,
  { label: string; target: string; placeholder: string; hint: string }
> = {
  email: {
    label: 'Email',
    target: 'Email address',
    placeholder: 'oncall@example.com',
    hint: 'Where the messages are mailed.',
  },
  slack: {
    label: 'Slack',
    target: 'Incoming webhook URL',
    placeholder: 'https://hooks.slack.com/services/…',
    hint: 'A Slack incoming webhook (HTTPS): messages are posted as {"text"}.',
  },
  discord: {
    label: 'Discord',
    target: 'Webhook URL',
    placeholder: 'https://discord.com/api/webhooks/…',
    hint: 'A Discord channel webhook (HTTPS): messages are posted as {"content"}.',
  },
  webhook: {
    label: 'Webhook',
    target: 'HTTPS URL',
    placeholder: 'https://example.com/hooktrail-notifications',
    hint: 'Gets JSON {type, data, created_at}, signed with hooktrail-* headers under a secret shown once.',
  },
};

/** Each kind of notification: a name and when it is sent. */
export const EVENT_TEXT: Record<NotificationEventType, { label: string; explanation: string }> = {
  dead_letter: { label: 'Dead letters', explanation: 'A delivery gave up after its last retry.' },
  'issue.opened': { label: 'Issue opened', explanation: 'A destination started failing in a new way.' },
  'issue.resolved': { label: 'Issue resolved', explanation: 'A failing destination delivers again.' },
  'destination.paused': {
    label: 'Destination paused',
    explanation: 'A destination was paused after too many failures in a row.',
  },
};

/** The channel's health in words: when it last sent, or since when and why it is failing or turned off. */
export function channelHealthText(channel: NotificationChannel): string {
  const sent = channel.last_sent_at ? `last sent ${localTime(channel.last_sent_at)}` : 'nothing sent yet';
  if (channel.status === 'ok') return `Working, ${sent}`;
  const since = channel.failing_since ? ` since ${localTime(channel.failing_since)}` : '';
  const why = channel.last_error ? `: ${channel.last_error}` : '';
  if (channel.status === 'disabled') {
    return `Turned off, failing${since}${why}. A test that goes through turns it back on.`;
  }
  return `Failing${since}${why}`;
}
