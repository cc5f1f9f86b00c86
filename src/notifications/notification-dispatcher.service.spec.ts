import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import type { ChannelMessage } from './channel-messages';
import { ChannelSendError, type ChannelSender } from './channel-sender.service';
import type { NotificationChannel } from './notification-channel';
import { NOTIFICATION_CLAIM_MS, RETRY_HOLD_MARGIN_MS } from '../jobs/notification-jobs';
import { NotificationDispatcher } from './notification-dispatcher.service';
import type { NotificationScheduler } from './notification-scheduler.service';
import type { ClaimedMessage, NotificationsRepository } from './notifications.repository';

/** A collaborator stub with only the members the test needs. */
const stub = <T>(members: Partial<T>): T => members as T;

const RETRY_DELAYS_MS = [5000, 25000, 120000, 600000];
const WINDOW_S = 120;

const channelOf = (type: NotificationChannel['type'], status: NotificationChannel['status'] = 'ok') =>
  ({ id: 'channel-1', type, status, target: 'https://hooks.example.com/x' }) as NotificationChannel;

const messageOf = (messageId: string): ClaimedMessage => ({
  messageId,
  notifications: [
    { id: '1', type: 'issue.opened', data: { issue: { summary: 'HTTP 500' } }, createdAt: new Date() },
  ],
});

describe(NotificationDispatcher.name, () => {
  /** What happened, in order. */
  let steps: string[];
  let channel: NotificationChannel | null;
  /** What the claims answer, one after the other (then nothing). */
  let begun: ClaimedMessage[];
  let due: ClaimedMessage[];
  let windowEnd: Date | null;
  let failures: Map<string, number>;
  let sendError: Error | null;
  const claimsDue: { limit: number; windowed: boolean; windowMs: number; leaseMs: number }[] = [];
  const holds: { messageId: string; jobId: string; holdMs: number }[] = [];
  const retries: { jobId: string; delayMs: number }[] = [];
  const scheduled: (Date | undefined)[] = [];

  const sut = () =>
    new NotificationDispatcher(
      stub<NotificationsRepository>({
        withChannelLock: async <T>(_channelId: string, work: (trx: never) => Promise<T>) => {
          steps.push('lock');
          const result = await work(undefined as never);
          steps.push('unlock');
          return result;
        },
        channelForSending: async () => channel,
        discardPending: async () => void steps.push('discarded'),
        claimBegun: async (_trx, _channelId, jobId, leaseMs) => {
          expect([jobId, leaseMs]).toEqual(['job-7', NOTIFICATION_CLAIM_MS]);
          return begun.shift() ?? null;
        },
        claimDue: async (_trx, claim) => {
          claimsDue.push(claim);
          return due.shift() ?? null;
        },
        nextWindowEnd: async () => windowEnd,
        markSent: async (_channelId, messageId) => void steps.push(`sent ${messageId}`),
        countFailure: async (_channelId, messageId) => {
          const count = (failures.get(messageId) ?? 0) + 1;
          failures.set(messageId, count);
          return count;
        },
        holdForRetry: async (messageId, retry) => void holds.push({ messageId, ...retry }),
        markDropped: async (_channelId, messageId) => {
          steps.push(`dropped ${messageId}`);
          return 'failing';
        },
      }),
      stub<NotificationScheduler>({
        schedule: async (_channelId, notBefore) => void scheduled.push(notBefore),
        scheduleRetry: async (_channelId, jobId, delayMs) => void retries.push({ jobId, delayMs }),
      }),
      stub<ChannelSender>({
        send: async (_channel, _message: ChannelMessage, messageId) => {
          steps.push(`send ${messageId}`);
          if (sendError) throw sendError;
        },
      }),
      stub<ConfigService<Environment, true>>({
        get: ((key: keyof Environment) =>
          ({
            SITE_URL: 'https://hooktrail.example',
            NOTIFICATION_WINDOW_S: WINDOW_S,
            DELIVERY_RETRY_DELAYS_MS: RETRY_DELAYS_MS,
          })[key as string]) as ConfigService<Environment, true>['get'],
      }),
    );

  beforeEach(() => {
    steps = [];
    channel = channelOf('slack');
    begun = [];
    due = [];
    windowEnd = null;
    failures = new Map();
    sendError = null;
    claimsDue.length = 0;
    holds.length = 0;
    retries.length = 0;
    scheduled.length = 0;
  });

  it('sends each claimed message outside the lock, a begun one first, then schedules the end of the next window', async () => {
    begun = [messageOf('ntf_begun')];
    due = [messageOf('ntf_due')];
    windowEnd = new Date(Date.now() + 60_000);
    await sut().sendFor('channel-1', 'job-7');
    expect(steps).toEqual([
      'lock',
      'unlock',
      'send ntf_begun',
      'sent ntf_begun',
      'lock',
      'unlock',
      'send ntf_due',
      'sent ntf_due',
      'lock',
      'unlock',
    ]);
    expect(scheduled).toEqual([windowEnd]);
    expect(claimsDue[0]).toMatchObject({
      limit: 1000,
      windowed: true,
      windowMs: WINDOW_S * 1000,
      leaseMs: NOTIFICATION_CLAIM_MS,
    });
  });

  it('claims a webhook channel one notification at a time, with no window', async () => {
    channel = channelOf('webhook');
    due = [messageOf('ntf_a'), messageOf('ntf_b')];
    await sut().sendFor('channel-1', 'job-7');
    expect(steps.filter((step) => step.startsWith('sent'))).toEqual(['sent ntf_a', 'sent ntf_b']);
    expect(claimsDue.map(({ limit, windowed }) => ({ limit, windowed }))).toEqual(
      Array(3).fill({ limit: 1, windowed: false }),
    );
    expect(scheduled).toEqual([]);
  });

  it("holds a failed message for a retry job of its own after the schedule's next delay, and goes on with the others", async () => {
    sendError = new ChannelSendError('HTTP 503');
    failures.set('ntf_failing', 1); // its second attempt fails now
    due = [messageOf('ntf_failing')];
    await sut().sendFor('channel-1', 'job-7');
    expect(holds).toEqual([
      {
        messageId: 'ntf_failing',
        jobId: 'notification-retry:ntf_failing:2',
        holdMs: RETRY_DELAYS_MS[1] + RETRY_HOLD_MARGIN_MS,
      },
    ]);
    expect(retries).toEqual([{ jobId: 'notification-retry:ntf_failing:2', delayMs: RETRY_DELAYS_MS[1] }]);
    expect(steps.slice(-2)).toEqual(['lock', 'unlock']); // it looked for more once the message was held
  });

  it('drops a message whose last attempt failed, and retries it no more', async () => {
    sendError = new Error('socket hang up');
    failures.set('ntf_last', RETRY_DELAYS_MS.length);
    due = [messageOf('ntf_last')];
    await sut().sendFor('channel-1', 'job-7');
    expect(steps).toContain('dropped ntf_last');
    expect([holds, retries]).toEqual([[], []]);
  });

  it('discards what a disabled channel was to be sent, and sends nothing', async () => {
    channel = channelOf('email', 'disabled');
    due = [messageOf('ntf_x')];
    await sut().sendFor('channel-1', 'job-7');
    expect(steps).toEqual(['lock', 'discarded', 'unlock']);
  });
});
