import { localTime } from './format';
import { channelHealthText } from './notification-channels';
import type { NotificationChannel } from './types';

/** The health line of each channel on the notifications page. */
describe('notification channel health', () => {
  const channel = (changes: Partial<NotificationChannel>): NotificationChannel => ({
    id: 'c_1',
    type: 'slack',
    target: 'https://hooks.slack.com/services/T/B/X',
    events: ['dead_letter'],
    status: 'ok',
    last_error: null,
    last_sent_at: null,
    failing_since: null,
    created_at: '2026-11-25T09:00:00.000Z',
    secret: null,
    secret_set: false,
    ...changes,
  });
  const since = '2026-11-25T10:00:00.000Z';

  it('says a working channel works, and when it last sent', () => {
    expect(channelHealthText(channel({}))).toBe('Working, nothing sent yet');
    expect(channelHealthText(channel({ last_sent_at: since }))).toBe(
      `Working, last sent ${localTime(since)}`,
    );
  });

  it('says since when and why a channel fails, and how a turned-off one comes back', () => {
    const failing = { failing_since: since, last_error: 'HTTP 500 from the channel' };
    expect(channelHealthText(channel({ status: 'failing', ...failing }))).toBe(
      `Failing since ${localTime(since)}: HTTP 500 from the channel`,
    );
    expect(channelHealthText(channel({ status: 'disabled', ...failing }))).toBe(
      `Turned off, failing since ${localTime(since)}: HTTP 500 from the channel. A test that goes through turns it back on.`,
    );
    expect(channelHealthText(channel({ status: 'failing' }))).toBe('Failing');
  });
});
