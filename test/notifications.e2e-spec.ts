import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { MAILED_EVENTS_LIMIT } from '../src/mail/alert-mailer.service';
import { Notifier } from '../src/notifications/notifier.service';
import { api, registerUser, type RegisteredUser } from './support/api-client';
import { answer, HttpsDestination, type ReceivedRequest } from './support/https-destination';
import { SmtpSink } from './support/smtp-sink';
import { addTeamMember } from './support/tenant-fixture';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint } from './support/webhook-fixtures';

/** Destinations and channels alike: four retries 100 ms apart, then a dead letter or a dropped message. */
const RETRY_DELAYS = '100,100,100,100';
const ATTEMPTS = 5;
/**
 * The channels' window per kind: long beside the time a notification takes to go out at once (some
 * milliseconds), so that "at once" and "at the window's end" cannot be mistaken for each other.
 */
const WINDOW_S = 10;
/** Nothing listens here: every attempt fails at once with ECONNREFUSED. */
const REFUSING_URL = 'https://127.0.0.1:1/hooks';

/** Polls `probe` until it answers something `done` accepts, or fails after `timeoutMs`. */
async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what}: still ${JSON.stringify(value)} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const json = (request: ReceivedRequest) => JSON.parse(request.body.toString('utf8'));

describe('notification channels', () => {
  let sut: TestApp;
  let smtp: SmtpSink;
  let db: Client;
  let owner: RegisteredUser;
  const servers: HttpsDestination[] = [];
  const server = async (status = 200) => {
    const started = await HttpsDestination.start(answer(status, status === 200 ? 'ok' : 'nope'));
    servers.push(started);
    return started;
  };
  const call = (method: string, path: string, body?: unknown, user = owner) =>
    api(sut.url, method, `/api/notification-channels${path}`, { token: user.accessToken, body });
  const createChannel = async (type: string, target: string, events: string[], user = owner) => {
    const created = await call('POST', '', { type, target, events }, user);
    expect(created.status).toBe(201);
    return created.body.channel as { id: string; secret: string | null };
  };
  const channelState = async (id: string) =>
    ((await call('GET', '')).body.channels as { id: string; status: string }[]).find(
      (channel) => channel.id === id,
    ) as Record<string, unknown>;
  const outboxCount = async (channelId: string) =>
    Number(
      (await db.query(`select count(*) from notification_outbox where channel_id = $1`, [channelId])).rows[0]
        .count,
    );
  /**
   * Waits for the channel's outbox to be empty: sent rows leave it when the transaction that sent them
   * commits, just after the receiver answered.
   */
  const outboxEmptied = (channelId: string) =>
    eventually(
      () => outboxCount(channelId),
      (count) => count === 0,
      'outbox emptied',
    );
  beforeAll(async () => {
    smtp = await SmtpSink.start();
    sut = await startTestApp({
      DELIVERY_RETRY_DELAYS_MS: RETRY_DELAYS,
      DELIVERY_TIMEOUT_MS: '2000',
      NOTIFICATION_WINDOW_S: String(WINDOW_S),
      SMTP_URL: smtp.url,
    });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    owner = await registerUser(sut.url);
  });
  afterAll(async () => {
    await db?.end();
    await sut?.close();
    await Promise.all(servers.map((started) => started.close()));
    await smtp?.close();
  });

  it('creates, lists, reads and deletes channels; the webhook secret is shown at creation only', async () => {
    const user = await registerUser(sut.url);
    const slack = await call(
      'POST',
      '',
      { type: 'slack', target: 'https://hooks.slack.com/services/T0/B0/x', events: ['dead_letter'] },
      user,
    );
    expect(slack.status).toBe(201);
    expect(slack.body.channel).toMatchObject({
      type: 'slack',
      target: 'https://hooks.slack.com/services/T0/B0/x',
      events: ['dead_letter'],
      status: 'ok',
      last_error: null,
      last_sent_at: null,
      failing_since: null,
      secret: null,
      secret_set: false,
    });
    const webhook = await call(
      'POST',
      '',
      { type: 'webhook', target: 'https://example.com/notify', events: ['issue.opened', 'issue.resolved'] },
      user,
    );
    expect(webhook.body.channel.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(webhook.body.channel.secret_set).toBe(true);
    const email = await call(
      'POST',
      '',
      { type: 'email', target: 'ops@example.com', events: ['dead_letter'] },
      user,
    );
    expect(email.status).toBe(201);

    const listed = await call('GET', '', undefined, user);
    expect(listed.status).toBe(200);
    expect(listed.body.channels.map((channel: { id: string }) => channel.id)).toEqual([
      slack.body.channel.id,
      webhook.body.channel.id,
      email.body.channel.id,
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(webhook.body.channel.secret);
    // Every answer but the creation's says that the webhook channel has a secret, not what it is.
    expect(
      listed.body.channels.map((channel: { secret: unknown; secret_set: unknown }) => [
        channel.secret,
        channel.secret_set,
      ]),
    ).toEqual([
      [null, false],
      [null, true],
      [null, false],
    ]);
    const one = await call('GET', `/${webhook.body.channel.id}`, undefined, user);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ channel: listed.body.channels[1] });

    expect(await call('DELETE', `/${slack.body.channel.id}`, undefined, user)).toMatchObject({
      status: 200,
      body: { ok: true },
    });
    expect((await call('DELETE', `/${slack.body.channel.id}`, undefined, user)).status).toBe(404);
    expect((await call('GET', `/${slack.body.channel.id}`, undefined, user)).status).toBe(404);
    expect((await call('GET', '', undefined, user)).body.channels).toHaveLength(2);
  });

  it.each([
    ['an unknown type', { type: 'sms', target: 'https://example.com/a', events: ['dead_letter'] }, 'type'],
    ['no type', { target: 'https://example.com/a', events: ['dead_letter'] }, 'type'],
    [
      'a URL for an email channel',
      { type: 'email', target: 'https://example.com/a', events: ['dead_letter'] },
      'target',
    ],
    [
      'an address for a slack channel',
      { type: 'slack', target: 'ops@example.com', events: ['dead_letter'] },
      'target',
    ],
    [
      'an http:// URL',
      { type: 'webhook', target: 'http://example.com/a', events: ['dead_letter'] },
      'target',
    ],
    ['a null target', { type: 'discord', target: null, events: ['dead_letter'] }, 'target'],
    ['no events', { type: 'slack', target: 'https://example.com/a', events: [] }, 'events'],
    [
      'an unknown event',
      { type: 'slack', target: 'https://example.com/a', events: ['dead_letter', 'nope'] },
      'events',
    ],
    [
      'events as a string',
      { type: 'slack', target: 'https://example.com/a', events: 'dead_letter' },
      'events',
    ],
    [
      'a repeated event',
      { type: 'slack', target: 'https://example.com/a', events: ['dead_letter', 'dead_letter'] },
      'events',
    ],
  ])('refuses %s with a 400 naming the field, storing nothing', async (_label, body, field) => {
    const user = await registerUser(sut.url);
    const refused = await call('POST', '', body, user);
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body.message)).toContain(field);
    expect((await call('GET', '', undefined, user)).body.channels).toEqual([]);
  });

  it("answers 404 for another user's channel, and never lists it", async () => {
    const channel = await createChannel('webhook', 'https://example.com/notify', ['dead_letter']);
    const stranger = await registerUser(sut.url);
    expect((await call('DELETE', `/${channel.id}`, undefined, stranger)).status).toBe(404);
    expect((await call('POST', `/${channel.id}/test`, undefined, stranger)).status).toBe(404);
    expect((await call('POST', '/not-a-uuid/test', undefined, stranger)).status).toBe(404);
    expect((await call('GET', '', undefined, stranger)).body.channels).toEqual([]);
    expect(await channelState(channel.id)).toBeDefined();
  });

  it('sends a test message in the shape of each channel type, the webhook one signed with the channel secret', async () => {
    const slackServer = await server();
    const discordServer = await server();
    const webhookServer = await server();
    const slack = await createChannel('slack', `${slackServer.url}/slack`, ['dead_letter']);
    const discord = await createChannel('discord', `${discordServer.url}/discord`, ['dead_letter']);
    const webhook = await createChannel('webhook', `${webhookServer.url}/hooks`, ['dead_letter']);
    const email = await createChannel('email', 'oncall@example.com', ['dead_letter']);

    for (const channel of [slack, discord, webhook, email])
      expect(await call('POST', `/${channel.id}/test`)).toMatchObject({
        status: 200,
        body: { ok: true, error: null },
      });

    const [toSlack] = await slackServer.waitForRequests(1);
    expect(toSlack.url).toBe('/slack');
    expect(toSlack.headers['content-type']).toBe('application/json');
    expect(json(toSlack)).toEqual({ text: expect.stringContaining('Test notification from Hooktrail') });
    const [toDiscord] = await discordServer.waitForRequests(1);
    expect(json(toDiscord)).toEqual({ content: expect.stringContaining('Test notification from Hooktrail') });

    const [toWebhook] = await webhookServer.waitForRequests(1);
    const verifier = new Webhook(Buffer.from(webhook.secret ?? '', 'utf8').toString('base64'));
    const verified = verifier.verify(toWebhook.body.toString('utf8'), {
      'webhook-id': String(toWebhook.headers['hooktrail-id']),
      'webhook-timestamp': String(toWebhook.headers['hooktrail-timestamp']),
      'webhook-signature': String(toWebhook.headers['hooktrail-signature']),
    });
    expect(verified).toEqual({
      type: 'test',
      data: { channel_id: webhook.id, message: expect.any(String) },
      created_at: expect.any(String),
    });
    const forged = new Webhook(Buffer.from('whsec_other', 'utf8').toString('base64'));
    expect(() =>
      forged.verify(toWebhook.body.toString('utf8'), {
        'webhook-id': String(toWebhook.headers['hooktrail-id']),
        'webhook-timestamp': String(toWebhook.headers['hooktrail-timestamp']),
        'webhook-signature': String(toWebhook.headers['hooktrail-signature']),
      }),
    ).toThrow();

    const mail = await eventually(
      async () => smtp.mails.find((received) => received.to.includes('oncall@example.com')),
      (found) => found !== undefined,
      'test mail',
    );
    expect(mail?.text).toContain('Subject: [Hooktrail] Test notification');
    expect((await channelState(webhook.id)).last_sent_at).toEqual(expect.any(String));
  });

  it('limits a user to 10 test messages a minute, all channels together', async () => {
    const user = await registerUser(sut.url);
    const receiver = await server();
    const channels = [
      await createChannel('slack', `${receiver.url}/a`, ['dead_letter'], user),
      await createChannel('discord', `${receiver.url}/b`, ['dead_letter'], user),
    ];
    const statuses: number[] = [];
    for (let n = 0; n < 11; n++)
      statuses.push((await call('POST', `/${channels[n % 2].id}/test`, undefined, user)).status);
    expect(statuses).toEqual([...Array<number>(10).fill(200), 429]);
    expect(receiver.received).toHaveLength(10);
  });

  it('answers a failed test with the reason, and keeps it on the channel', async () => {
    const refusing = await server(503);
    const channel = await createChannel('discord', `${refusing.url}/down`, ['dead_letter']);
    const tested = await call('POST', `/${channel.id}/test`);
    expect(tested.status).toBe(200);
    expect(tested.body).toEqual({ ok: false, error: 'HTTP 503: nope' });
    expect(await channelState(channel.id)).toMatchObject({
      last_error: 'HTTP 503: nope',
      last_sent_at: null,
    });
  });

  it('tells a channel subscribed to dead_letter about a dead letter, not one that is not, and still mails the owner', async () => {
    const user = await registerUser(sut.url);
    const subscribed = await server();
    const other = await server();
    const hooked = await server();
    const told = await createChannel(
      'slack',
      `${subscribed.url}/slack`,
      ['dead_letter', 'issue.resolved'],
      user,
    );
    const notTold = await createChannel('slack', `${other.url}/slack`, ['destination.paused'], user);
    await createChannel('webhook', `${hooked.url}/hook`, ['dead_letter'], user);
    const fixture = await createEndpoint(sut.url, user);
    // Basic credentials in the destination's URL: its password is kept out of every message.
    const password = 'pw-in-the-url-5e1d';
    await addDestination(sut.url, fixture, REFUSING_URL.replace('https://', `https://ops:${password}@`));
    const mailsBefore = smtp.mails.length;

    const eventId = await capture(fixture);
    const [message] = await subscribed.waitForRequests(1, 30_000);

    const { text } = json(message);
    expect(text).toContain('1 webhook dead-lettered on');
    expect(text).toContain(`/#/endpoints/${fixture.endpointId}`);
    const [posted] = await hooked.waitForRequests(1, 30_000);
    expect(json(posted).data.events[0].destinations[0].url).toBe(
      REFUSING_URL.replace('https://', 'https://ops:[redacted]@'),
    );
    const mails = await smtp.waitForMails(mailsBefore + 1);
    const mail = mails.find((sent) => sent.to.includes(user.email) && sent.text.includes(eventId));
    expect(mail?.text).toContain('ops:[redacted]@127.0.0.1:1/hooks');
    expect(mail?.text).not.toContain(password);
    // The outbox rows of every subscribed channel are written by one statement, and a row is deleted only
    // once its message went out: with none left and none received, the other channel was never told.
    await outboxEmptied(told.id);
    expect(await outboxCount(notTold.id)).toBe(0);
    expect(other.received).toHaveLength(0);
  });

  it("tells every owner and admin of a team's endpoint about its dead letter, by one mail and on each one's channels, and no member or viewer", async () => {
    const roles = ['owner', 'owner', 'admin', 'admin', 'member', 'viewer'] as const;
    const users = await Promise.all(roles.map(() => registerUser(sut.url)));
    const { rows } = await db.query<{ id: string }>(
      `insert into teams (name) values ('Payments') returning id`,
    );
    const teamId = rows[0].id;
    for (const [index, role] of roles.entries()) await addTeamMember(db, teamId, users[index].id, role);
    const receivers = await Promise.all(users.map(() => server()));
    const channels = await Promise.all(
      users.map((user, index) =>
        createChannel('slack', `${receivers[index].url}/slack`, ['dead_letter'], user),
      ),
    );
    const alerted = roles.flatMap((role, index) => (role === 'owner' || role === 'admin' ? [index] : []));
    const notAlerted = roles.flatMap((role, index) => (alerted.includes(index) ? [] : [index]));
    // Made by the member: who made an endpoint does not decide who hears of it.
    const maker = users[roles.indexOf('member')];
    const created = await api(sut.url, 'POST', '/api/endpoints', {
      token: maker.accessToken,
      body: { name: 'Team payments', team_id: teamId },
    });
    expect(created.status).toBe(201);
    const fixture = {
      user: maker,
      endpointId: created.body.endpoint.id as string,
      captureUrl: `${sut.url}/in/${created.body.endpoint.public_token}`,
    };
    await addDestination(sut.url, fixture, REFUSING_URL);
    const mailsBefore = smtp.mails.length;

    const eventId = await capture(fixture);
    for (const index of alerted) {
      const [message] = await receivers[index].waitForRequests(1, 30_000);
      expect(json(message).text).toContain('1 webhook dead-lettered on');
    }
    const [mail] = (await smtp.waitForMails(mailsBefore + 1)).filter((sent) => sent.text.includes(eventId));
    expect([...mail.to].sort()).toEqual(alerted.map((index) => users[index].email).sort());
    for (const index of alerted) await outboxEmptied(channels[index].id);
    // The outbox rows of every channel told are written by one statement: the member's and viewer's got none.
    for (const index of notAlerted) {
      expect(await outboxCount(channels[index].id)).toBe(0);
      expect(receivers[index].received).toHaveLength(0);
    }
  });

  it('tells a webhook channel of a flood of 1,000 dead letters in two messages, as the alert mail digests them, that count them all', async () => {
    const user = await registerUser(sut.url);
    const receiver = await server();
    const channel = await createChannel('webhook', `${receiver.url}/hooks`, ['dead_letter'], user);
    const fixture = await createEndpoint(sut.url, user);
    await addDestination(sut.url, fixture, REFUSING_URL);
    const total = 1000;
    for (let sent = 0; sent < total; sent += 50)
      await Promise.all(Array.from({ length: 50 }, () => capture(fixture, '{"flood":true}')));

    await eventually(
      async () =>
        Number(
          (
            await db.query(`select count(*) from events where endpoint_id = $1 and status = 'dead_letter'`, [
              fixture.endpointId,
            ])
          ).rows[0].count,
        ),
      (count) => count === total,
      'dead letters',
      120_000,
    );
    await receiver.waitForRequests(1, 30_000);
    // The rest waits for the end of the endpoint's alert window (10 minutes): end it now instead of
    // waiting. The alert sweep picks them up within seconds; a webhook channel has no window of its own.
    await db.query(
      `update dead_letter_alerts set created_at = created_at - interval '1 hour', sent_at = sent_at - interval '1 hour'
       where endpoint_id = $1`,
      [fixture.endpointId],
    );
    const counted = () =>
      receiver.received.reduce((sum, request) => sum + (json(request).data.count as number), 0);
    await eventually(
      async () => counted(),
      (count) => count === total,
      'dead letters notified',
    );

    expect(receiver.received).toHaveLength(2);
    // The owner's dead-letter email still goes, digested the same way: one mail, then one digest.
    const mails = await eventually(
      async () => smtp.mails.filter((mail) => mail.to.includes(user.email)),
      (found) => found.length >= 2,
      'dead-letter mails',
    );
    expect(mails).toHaveLength(2);
    // The digest lists 100 of its hundreds of events, and says how many more.
    expect(mails[1].text).toMatch(/…and \d+ more: \S+\?status=dead_letter lists them all\./);
    expect(mails[1].text.match(/^Event /gm)).toHaveLength(MAILED_EVENTS_LIMIT);
    for (const request of receiver.received) {
      expect(json(request)).toMatchObject({
        type: 'dead_letter',
        data: { endpoint: { id: fixture.endpointId }, count: expect.any(Number) },
      });
      expect(json(request).data.events.length).toBeLessThanOrEqual(20);
    }
    await outboxEmptied(channel.id);
  }, 180_000);

  it('sends a webhook channel each of 1,000 notifications at once, signed, and a chat the first at once and the rest in digests a window apart', async () => {
    const user = await registerUser(sut.url);
    const hooks = await server();
    const chat = await server();
    const webhook = await createChannel('webhook', `${hooks.url}/hooks`, ['issue.opened'], user);
    const slack = await createChannel('slack', `${chat.url}/slack`, ['issue.opened'], user);
    const notifier = sut.app.get(Notifier);
    const { endpointId } = await createEndpoint(sut.url, user);
    const total = 1000;
    const issue = (index: number) => ({
      endpointId,
      type: 'issue.opened' as const,
      data: { issue: { id: `issue-${index}`, kind: 'http_5xx', summary: `HTTP 500 #${index}` } },
    });

    for (let index = 0; index < total; index += 100)
      await Promise.all(Array.from({ length: 100 }, (_, offset) => notifier.notify(issue(index + offset))));
    const itemsIn = (request: ReceivedRequest) => {
      const digest = /^Hooktrail: (\d+) notifications since /.exec(json(request).text as string);
      return digest ? Number(digest[1]) : 1;
    };
    await eventually(
      async () => chat.received.reduce((sum, request) => sum + itemsIn(request), 0),
      (count) => count === total,
      'chat messages',
      90_000,
    );
    const received = await hooks.waitForRequests(total, 90_000);

    // One message per notification, each signed under the channel's secret with an id of its own.
    const verifier = new Webhook(Buffer.from(webhook.secret ?? '', 'utf8').toString('base64'));
    const issueIds = received.map((request) => {
      const body = verifier.verify(request.body.toString('utf8'), {
        'webhook-id': String(request.headers['hooktrail-id']),
        'webhook-timestamp': String(request.headers['hooktrail-timestamp']),
        'webhook-signature': String(request.headers['hooktrail-signature']),
      }) as { type: string; data: { issue: { id: string } }; created_at: string };
      expect(body).toEqual({
        type: 'issue.opened',
        data: { issue: expect.objectContaining({ kind: 'http_5xx' }) },
        created_at: expect.any(String),
      });
      return body.data.issue.id;
    });
    expect(new Set(issueIds).size).toBe(total);
    expect(new Set(received.map((request) => request.headers['hooktrail-id'])).size).toBe(total);

    // The chat: the first alone, at once; then digests, each at least a window after the one before.
    const messages = chat.received;
    expect(itemsIn(messages[0])).toBe(1);
    expect(messages.length).toBeGreaterThanOrEqual(2);
    for (let next = 1; next < messages.length; next++)
      expect(messages[next].at - messages[next - 1].at).toBeGreaterThan(WINDOW_S * 1000 * 0.8);
    await outboxEmptied(webhook.id);
    await outboxEmptied(slack.id);
  }, 180_000);

  it('sends the first notification of each kind at once: a dead letter does not wait behind an issue, a second issue waits for the end of its window', async () => {
    const user = await registerUser(sut.url);
    const chat = await server();
    await createChannel('slack', `${chat.url}/slack`, ['issue.opened', 'dead_letter'], user);
    const notifier = sut.app.get(Notifier);
    const { endpointId } = await createEndpoint(sut.url, user);
    const issue = (summary: string) => ({
      endpointId,
      type: 'issue.opened' as const,
      data: { issue: { kind: 'http_5xx', summary, destination: { url: 'https://api.example.com/a' } } },
    });

    await notifier.notify(issue('first issue'));
    const [first] = await chat.waitForRequests(1);
    await notifier.notify(issue('second issue'));
    await notifier.notify({
      endpointId,
      type: 'dead_letter',
      data: { endpoint: { id: endpointId, name: 'Orders' }, count: 1, events: [] },
    });
    const [, deadLetter, second] = await chat.waitForRequests(3, 30_000);

    expect(json(first).text).toContain('first issue');
    // The dead letter went at once, on its own, while the issues' window was still open.
    expect(json(deadLetter).text).toContain('1 webhook dead-lettered on "Orders"');
    expect(json(deadLetter).text).not.toContain('issue');
    expect(deadLetter.at - first.at).toBeLessThan(WINDOW_S * 1000);
    // The second issue waited for the end of the window the first one began.
    expect(json(second).text).toContain('second issue');
    expect(second.at - first.at).toBeGreaterThan(WINDOW_S * 1000 * 0.8);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(chat.received).toHaveLength(3);
  }, 60_000);

  it('drops a message after its retries, reports the channel failing, disables it after five, and a test revives it', async () => {
    const user = await registerUser(sut.url);
    const receiver = await server(500);
    const channel = await createChannel('webhook', `${receiver.url}/hooks`, ['destination.paused'], user);
    const notifier = sut.app.get(Notifier);
    const { endpointId } = await createEndpoint(sut.url, user);
    const paused = {
      endpointId,
      type: 'destination.paused' as const,
      data: { destination: { url: 'x' } },
    };
    const ownState = async () =>
      ((await call('GET', '', undefined, user)).body.channels as Record<string, unknown>[])[0];

    await notifier.notify(paused);
    const failing = await eventually(ownState, (value) => value.status === 'failing', 'failing');
    expect(failing).toMatchObject({ last_error: 'HTTP 500: nope', failing_since: expect.any(String) });
    expect(receiver.received).toHaveLength(ATTEMPTS);
    // Every attempt of one message carries its one id, which a receiver de-duplicates by.
    expect(new Set(receiver.received.map((request) => request.headers['hooktrail-id'])).size).toBe(1);
    // Dropped: nothing left to send, so nothing more is tried.
    expect(await outboxCount(channel.id)).toBe(0);

    // Four more dropped messages in a row disable it.
    for (let dropped = 2; dropped <= 5; dropped++) {
      await notifier.notify(paused);
      await receiver.waitForRequests(dropped * ATTEMPTS);
      await outboxEmptied(channel.id);
    }
    expect(await eventually(ownState, (value) => value.status === 'disabled', 'disabled')).toMatchObject({
      failing_since: failing.failing_since,
    });
    await notifier.notify(paused);
    expect(await outboxCount(channel.id)).toBe(0); // a disabled channel is not written to
    expect(receiver.received).toHaveLength(5 * ATTEMPTS);

    receiver.always(answer(200, 'ok'));
    expect((await call('POST', `/${channel.id}/test`, undefined, user)).body).toEqual({
      ok: true,
      error: null,
    });
    expect(await ownState()).toMatchObject({ status: 'ok', last_error: null, failing_since: null });
  }, 60_000);
});
