import { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { api } from './support/api-client';
import { eventually } from './support/eventually';
import { answer, HttpsDestination } from './support/https-destination';
import { SmtpSink } from './support/smtp-sink';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint } from './support/webhook-fixtures';

/** The mail server takes each message in, then answers only this much later. */
const SMTP_ANSWER_AFTER_MS = 20_000;
/** Longer than the alert sweep's interval (5 s): a duplicate would have been sent by then. */
const SWEEP_PASS_MS = 6000;

describe('mail through a server that answers after 20 s: claimed, sent outside any transaction, marked sent', () => {
  let sut: TestApp;
  let smtp: SmtpSink;
  let db: Client;
  let destination: HttpsDestination;

  const alertRows = async (endpointId: string) =>
    (
      await db.query<{ mail_id: string | null; claimed: boolean; sent: boolean }>(
        `select mail_id, coalesce(claimed_until > now(), false) as claimed, sent_at is not null as sent
         from dead_letter_alerts where endpoint_id = $1`,
        [endpointId],
      )
    ).rows;
  const messageIdOf = (mail: { raw: string }) => /^Message-ID:\s*(\S+)/im.exec(mail.raw)?.[1];
  const expectedMessageId = (mailId: string) =>
    `<dead-letter-alert.${mailId}@${new URL(sut.env.SITE_URL as string).hostname}>`;

  /**
   * Sent inside a transaction, a mail would leave its connection "idle in transaction" since before the
   * mail began; other transactions are idle between two statements for milliseconds only.
   */
  const longIdleTransactions = async () => {
    await sleep(3000);
    const { rows } = await db.query<{ count: string }>(
      `select count(*) from pg_stat_activity
       where datname = current_database() and state like 'idle in transaction%'
         and state_change < now() - interval '2 seconds'`,
    );
    return Number(rows[0].count);
  };

  beforeAll(async () => {
    smtp = await SmtpSink.start(0, { answerAfterMs: SMTP_ANSWER_AFTER_MS });
    destination = await HttpsDestination.start(answer(500, 'nope'));
    sut = await startTestApp({
      SMTP_URL: smtp.url,
      DELIVERY_RETRY_DELAYS_MS: '100,100,100,100',
      DELIVERY_TIMEOUT_MS: '2000',
    });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await sut?.close();
    await smtp?.close();
    await destination?.close();
  });

  it('holds no database connection while the mail server hangs, then sends the mail once with its Message-ID', async () => {
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, destination.url);
    const eventId = await capture(fixture);

    // The mail is with the server, which has not answered yet.
    await eventually(
      async () => smtp.received,
      (received) => received === 1,
      30_000,
    );
    const [claimed] = await alertRows(fixture.endpointId);
    expect(claimed).toMatchObject({ claimed: true, sent: false });
    expect(await longIdleTransactions()).toBe(0);

    // Every connection of the service's pool but one taken: a request still gets the one left at once,
    // which the alert worker would hold were it sending the mail inside a transaction.
    const knex = sut.app.get(EntityManager).getKnex();
    const held: unknown[] = await Promise.all(
      Array.from({ length: knex.client.pool.max - 1 }, () => knex.client.acquireConnection()),
    );
    try {
      const listed = await api(sut.url, 'GET', '/api/endpoints', { token: fixture.user.accessToken });
      expect(listed.status).toBe(200);
      expect(smtp.mails).toHaveLength(0); // served while the mail server still hangs
    } finally {
      await Promise.all(held.map((connection) => knex.client.releaseConnection(connection)));
    }

    const [mail] = await smtp.waitForMails(1, SMTP_ANSWER_AFTER_MS + 20_000);
    expect(mail.to).toEqual([fixture.user.email]);
    expect(mail.text).toContain(eventId);
    expect(messageIdOf(mail)).toBe(expectedMessageId(claimed.mail_id as string));
    await eventually(
      () => alertRows(fixture.endpointId),
      (alerts) => alerts.every((alert) => alert.sent && !alert.claimed),
    );
    // The sweeps ran four times while the server hung and once more since: the claim kept the mail single.
    await sleep(SWEEP_PASS_MS);
    expect(smtp.received).toBe(1);
    expect(smtp.mails).toHaveLength(1);
  }, 90_000);

  it("sends the mail of a worker that died with its claim once the claim ran out, with the same Message-ID, and no running claim's", async () => {
    // The state a worker leaves when it dies while sending: its alerts claimed for a mail, not sent. The
    // events are captured without destinations (nothing is delivered, no other alert is made).
    const [dead, running] = await Promise.all([0, 1].map(() => createEndpoint(sut.url)));
    const [deadEvent, runningEvent] = await Promise.all([dead, running].map((fixture) => capture(fixture)));
    const deadMailId = randomUUID();
    const insertClaimed = (endpointId: string, eventId: string, mailId: string, claimedUntil: string) =>
      db.query(
        `insert into dead_letter_alerts (endpoint_id, event_id, created_at, notified_at, mail_id, claimed_until)
         values ($1, $2, now() - interval '1 minute', now() - interval '1 minute', $3, now() + $4::interval)`,
        [endpointId, eventId, mailId, claimedUntil],
      );
    await insertClaimed(dead.endpointId, deadEvent, deadMailId, '-1 second');
    await insertClaimed(running.endpointId, runningEvent, randomUUID(), '1 hour');
    const before = smtp.received;

    const mails = await smtp.waitForMails(before + 1, SMTP_ANSWER_AFTER_MS + 20_000);
    const mail = mails.at(-1)!;
    expect(mail.to).toEqual([dead.user.email]);
    expect(mail.text).toContain(deadEvent);
    expect(messageIdOf(mail)).toBe(expectedMessageId(deadMailId));
    await eventually(
      () => alertRows(dead.endpointId),
      (alerts) => alerts.every((alert) => alert.sent),
    );
    // The sweep pass that took the dead claim saw the running one too, and every pass since left it.
    await sleep(SWEEP_PASS_MS);
    expect(smtp.received).toBe(before + 1);
    expect(await alertRows(running.endpointId)).toEqual([
      expect.objectContaining({ claimed: true, sent: false }),
    ]);
  }, 90_000);

  it("sends a channel's mail outside any transaction, again with its message's Message-ID once its worker died, and leaves a running claim", async () => {
    const fixture = await createEndpoint(sut.url);
    const created = await api(sut.url, 'POST', '/api/notification-channels', {
      token: fixture.user.accessToken,
      body: { type: 'email', target: 'oncall@example.com', events: ['issue.opened'] },
    });
    expect(created.status).toBe(201);
    const channelId: string = created.body.channel.id;
    // What a worker leaves when it dies while sending: a message claimed, not sent; and one still running.
    const insertClaimed = (messageId: string, summary: string, claimedUntil: string) =>
      db.query(
        `insert into notification_outbox (channel_id, type, data, created_at, message_id, claimed_by, claimed_until)
         values ($1, 'issue.opened', $2::jsonb, now() - interval '1 minute', $3, 'a-job-of-a-dead-worker',
                 now() + $4::interval)`,
        [channelId, JSON.stringify({ issue: { kind: 'http_5xx', summary } }), messageId, claimedUntil],
      );
    const outbox = async () =>
      (
        await db.query<{ message_id: string; claimed_by: string; claimed: boolean }>(
          `select message_id, claimed_by, claimed_until > now() as claimed from notification_outbox
           where channel_id = $1 order by message_id`,
          [channelId],
        )
      ).rows;
    await insertClaimed('ntf_dead_worker', 'HTTP 503 since noon', '-1 minute');
    await insertClaimed('ntf_running', 'still being sent', '1 hour');
    const [received, mailed] = [smtp.received, smtp.mails.length];

    // The sweep gave the dead claim to a job of its own, whose mail is with the server, unanswered.
    await eventually(
      async () => smtp.received,
      (count) => count === received + 1,
      30_000,
    );
    expect(await outbox()).toEqual([
      { message_id: 'ntf_dead_worker', claimed_by: expect.not.stringMatching('dead-worker'), claimed: true },
      { message_id: 'ntf_running', claimed_by: 'a-job-of-a-dead-worker', claimed: true },
    ]);
    expect(await longIdleTransactions()).toBe(0);

    const mails = await smtp.waitForMails(mailed + 1, SMTP_ANSWER_AFTER_MS + 20_000);
    const mail = mails.at(-1)!;
    expect(mail.to).toEqual(['oncall@example.com']);
    expect(mail.text).toContain('HTTP 503 since noon');
    expect(messageIdOf(mail)).toBe(`<ntf_dead_worker@${new URL(sut.env.SITE_URL as string).hostname}>`);
    await eventually(outbox, (rows) => rows.length === 1);
    await sleep(SWEEP_PASS_MS);
    expect(smtp.received).toBe(received + 1);
    expect(await outbox()).toEqual([
      { message_id: 'ntf_running', claimed_by: 'a-job-of-a-dead-worker', claimed: true },
    ]);
  }, 90_000);
});
