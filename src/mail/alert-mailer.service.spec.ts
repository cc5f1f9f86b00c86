import type { MailerService } from '@nestjs-modules/mailer';
import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { ALERT_WINDOW_MS } from '../jobs/alert-jobs';
import type { NotificationEvent } from '../notifications/notification-events';
import type { Notifier } from '../notifications/notifier.service';
import { ALERT_CLAIM_MS, AlertMailer, MAILED_EVENTS_LIMIT } from './alert-mailer.service';
import type { AlertScheduler } from './alert-scheduler.service';
import type { AlertBatch, AlertsRepository } from './alerts.repository';

/** A collaborator stub with only the members the test needs. */
const stub = <T>(members: Partial<T>): T => members as T;

function batchOf(count: number, recipients = [{ email: 'owner@example.com', name: 'Ada' }]): AlertBatch {
  return {
    mailId: 'mail-1',
    endpointId: 'endpoint-1',
    endpointName: 'Stripe (prod)',
    recipients,
    alertIds: Array.from({ length: count }, (_, index) => `alert-${index}`),
    unnotifiedIds: Array.from({ length: count }, (_, index) => `alert-${index}`),
    events: Array.from({ length: Math.min(count, MAILED_EVENTS_LIMIT) }, (_, index) => ({
      alertId: `alert-${index}`,
      eventId: `event-${index}`,
      method: 'POST',
      receivedAt: new Date('2026-11-23T10:00:00Z'),
      destinations: [{ url: 'https://api.example.com/hooks', responseCode: 500, error: null }],
    })),
  };
}

describe(AlertMailer.name, () => {
  let lastSent: Date | null;
  let unsent: AlertBatch | null;
  let claimedUntil: Date | null = null;
  /** What happened, in order: 'lock', 'claim', 'unlock', 'send', 'marked', 'released'. */
  const steps: string[] = [];
  const sent: { to: string[]; subject: string; text: string; html: string; messageId: string }[] = [];
  const marked: string[] = [];
  const claims: number[] = [];
  const markedNotified: string[][] = [];
  const scheduled: { endpointId: string; notBefore?: Date }[] = [];
  const notified: NotificationEvent[] = [];
  const dispatched: string[][] = [];

  const repository = stub<AlertsRepository>({
    withEndpointLock: async <T>(_endpointId: string, work: (trx: never) => Promise<T>) => {
      steps.push('lock');
      const result = await work(undefined as never);
      steps.push('unlock');
      return result;
    },
    claimedUntil: async () => claimedUntil,
    lastSentAt: async () => lastSent,
    claim: async (_trx: unknown, _endpointId: string, _listed: number, leaseMs: number) => {
      steps.push('claim');
      claims.push(leaseMs);
      return unsent;
    },
    markSent: async (mailId: string) => {
      steps.push('marked');
      marked.push(mailId);
    },
    release: async () => void steps.push('released'),
    markNotified: async (_trx: unknown, ids: string[]) => void markedNotified.push(ids),
  });
  const mailer = stub<MailerService>({
    sendMail: async (mail) => {
      steps.push('send');
      sent.push(mail as (typeof sent)[number]);
      return {};
    },
  });
  const scheduler = stub<AlertScheduler>({
    schedule: async (endpointId, notBefore) => void scheduled.push({ endpointId, notBefore }),
  });
  const notifier = stub<Notifier>({
    record: async (_trx: unknown, event: NotificationEvent) => {
      notified.push(event);
      return ['channel-1'];
    },
    dispatch: async (channelIds: string[]) => void dispatched.push(channelIds),
  });
  const values: Partial<Environment> = {
    SITE_URL: 'https://hooktrail.example',
    SMTP_URL: 'smtp://127.0.0.1:1025',
  };
  const config = stub<ConfigService<Environment, true>>({
    get: ((name: keyof Environment) => values[name]) as ConfigService<Environment, true>['get'],
  });
  const sut = new AlertMailer(repository, scheduler, mailer, notifier, config);

  beforeEach(() => {
    claimedUntil = null;
    steps.length = 0;
    claims.length = 0;
    sent.length = 0;
    marked.length = 0;
    markedNotified.length = 0;
    scheduled.length = 0;
    notified.length = 0;
    dispatched.length = 0;
  });

  it('mails one alert naming the endpoint, the event, the destination, its last code and a link, and marks it sent', async () => {
    lastSent = null;
    unsent = batchOf(1);
    await sut.sendFor('endpoint-1');
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toEqual(['owner@example.com']);
    expect(sent[0].text).toMatch(/^Hi Ada,\n/);
    expect(sent[0].subject).toBe('[Hooktrail] Webhook dead-lettered on "Stripe (prod)"');
    expect(sent[0].text).toContain('event-0');
    expect(sent[0].text).toContain('2026-11-23T10:00:00.000Z');
    expect(sent[0].text).toContain('https://api.example.com/hooks: last response 500');
    expect(sent[0].text).toContain('https://hooktrail.example/#/endpoints/endpoint-1/events/event-0');
    expect(marked).toEqual(['mail-1']);
  });

  it('claims under the lock, sends after the lock is let go, then marks sent, with a Message-ID of the mail id', async () => {
    lastSent = null;
    unsent = batchOf(1);
    await sut.sendFor('endpoint-1');
    expect(steps).toEqual(['lock', 'claim', 'unlock', 'send', 'marked']);
    expect(claims).toEqual([ALERT_CLAIM_MS]);
    expect(sent[0].messageId).toBe('<dead-letter-alert.mail-1@hooktrail.example>');
  });

  it("claims nothing while another worker's claim runs, and looks again when it ends", async () => {
    lastSent = null;
    unsent = batchOf(1);
    claimedUntil = new Date(Date.now() + 60_000);
    await sut.sendFor('endpoint-1');
    expect(steps).toEqual(['lock', 'unlock']);
    expect(sent).toHaveLength(0);
    expect(scheduled).toEqual([{ endpointId: 'endpoint-1', notBefore: claimedUntil }]);
  });

  it("mails a team's endpoint's alert to every owner and admin of the team, in one mail greeting them all", async () => {
    lastSent = null;
    unsent = batchOf(1, [
      { email: 'ada@example.com', name: 'Ada' },
      { email: 'grace@example.com', name: 'Grace' },
      { email: 'lin@example.com', name: 'Lin <3' },
    ]);
    await sut.sendFor('endpoint-1');
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toEqual(['ada@example.com', 'grace@example.com', 'lin@example.com']);
    expect(sent[0].text).toMatch(/^Hi Ada, Grace and Lin <3,\n/);
    expect(sent[0].html).toContain('<p>Hi Ada, Grace and Lin &#60;3,</p>');
  });

  it('sends nothing within 10 minutes of the last mail and schedules a digest for the end of the window', async () => {
    lastSent = new Date(Date.now() - 60_000);
    unsent = batchOf(2);
    await sut.sendFor('endpoint-1');
    expect(sent).toHaveLength(0);
    expect(scheduled).toEqual([
      { endpointId: 'endpoint-1', notBefore: new Date(lastSent.getTime() + ALERT_WINDOW_MS) },
    ]);
  });

  it('sends every alert of the window as one digest once the window is over', async () => {
    lastSent = new Date(Date.now() - ALERT_WINDOW_MS - 1000);
    unsent = batchOf(3);
    await sut.sendFor('endpoint-1');
    expect(sent).toHaveLength(1);
    expect(sent[0].subject).toBe('[Hooktrail] 3 webhooks dead-lettered on "Stripe (prod)"');
    expect(marked).toEqual(['mail-1']);
  });

  it('lists at most 100 events of a flood, says how many more, counts and marks them all', async () => {
    lastSent = null;
    unsent = batchOf(2500);
    await sut.sendFor('endpoint-1');
    expect(sent[0].subject).toBe('[Hooktrail] 2500 webhooks dead-lettered on "Stripe (prod)"');
    expect(sent[0].text).toContain('event-99');
    expect(sent[0].text).not.toContain('event-100');
    expect(sent[0].text).toContain(
      '…and 2400 more: https://hooktrail.example/#/endpoints/endpoint-1?status=dead_letter lists them all.',
    );
    expect(Buffer.byteLength(sent[0].text)).toBeLessThan(64 * 1024);
    expect(notified[0].data.count).toBe(2500);
  });

  it("tells the endpoint's holders' dead_letter channels about the batch it mailed, and nothing while it waits", async () => {
    lastSent = null;
    unsent = batchOf(3);
    await sut.sendFor('endpoint-1');
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatchObject({
      endpointId: 'endpoint-1',
      type: 'dead_letter',
      data: { endpoint: { id: 'endpoint-1', name: 'Stripe (prod)' }, count: 3 },
    });
    expect(notified[0].data.events).toHaveLength(3);
    expect(dispatched).toEqual([['channel-1']]);

    notified.length = 0;
    lastSent = new Date();
    await sut.sendFor('endpoint-1');
    expect(notified).toHaveLength(0);
  });

  it('ends the claim and leaves the alerts unsent when SMTP fails, so the job retries, and tells the channels all the same', async () => {
    lastSent = null;
    unsent = batchOf(2);
    const refusing = stub<MailerService>({ sendMail: async () => Promise.reject(new Error('ECONNREFUSED')) });
    const failing = new AlertMailer(repository, scheduler, refusing, notifier, config);
    await expect(failing.sendFor('endpoint-1')).rejects.toThrow('ECONNREFUSED');
    expect(steps).toEqual(['lock', 'claim', 'unlock', 'released']);
    expect(marked).toHaveLength(0);
    expect(notified).toHaveLength(1);
    expect(markedNotified).toEqual([['alert-0', 'alert-1']]);
    expect(dispatched).toEqual([['channel-1']]);

    // The retry, SMTP back: the mail goes, and the channels are not told again of what they know.
    notified.length = 0;
    unsent = { ...batchOf(3), unnotifiedIds: ['alert-2'] };
    await sut.sendFor('endpoint-1');
    expect(sent).toHaveLength(1);
    expect(marked).toEqual(['mail-1']);
    expect(notified).toHaveLength(1);
    expect(notified[0].data).toMatchObject({ count: 1, events: [{ id: 'event-2' }] });
  });
});
