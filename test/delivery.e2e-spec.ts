import { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import { LOAD_FOR_ATTEMPTS } from '../src/delivery/attempt-recorder';
import { OutboxRepository } from '../src/delivery/outbox.repository';
import { ROUTE_BATCH, ROUTE_BATCH_SQL } from '../src/delivery/delivery-router.service';
import { lockEvents, REFRESH, refreshEventStatuses } from '../src/events/event-status';
import Stripe from 'stripe';
import { api } from './support/api-client';
import { answer, HttpsDestination, type Responder } from './support/https-destination';
import { genericPlan, queryPlan } from './support/knex-sql';
import { SmtpSink } from './support/smtp-sink';
import { startTestApp, type TestApp } from './support/test-app';
import {
  addDestination,
  capture,
  createEndpoint,
  getEvent,
  hasStatus,
  setPaused,
  waitForEvent,
} from './support/webhook-fixtures';

const RETRY_DELAYS = '300,300,300,300';

describe('delivery engine', () => {
  let sut: TestApp;
  let smtp: SmtpSink;
  const destinations: HttpsDestination[] = [];
  const destination = async (...responders: Parameters<HttpsDestination['respondWith']>) => {
    const started = await HttpsDestination.start();
    started.respondWith(...responders);
    destinations.push(started);
    return started;
  };

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    sut = await startTestApp({
      DELIVERY_RETRY_DELAYS_MS: RETRY_DELAYS,
      DELIVERY_TIMEOUT_MS: '1000',
      SMTP_URL: smtp.url,
    });
  });
  afterAll(async () => {
    await sut.close();
    await Promise.all(destinations.map((server) => server.close()));
    await smtp.close();
  });

  it('forwards the original method, query, headers and exact bytes, signed in the Standard Webhooks scheme', async () => {
    const sink = await destination();
    const fixture = await createEndpoint(sut.url);
    const secret = 'whsec-plain-utf8-secret-é';
    await addDestination(sut.url, fixture, `${sink.url}/hooks?source=hooktrail`, secret);
    const body = Buffer.from('{"type":"invoice.paid","note":"caf\u00e9 \u2603"}\n', 'utf8');

    const eventId = await capture(fixture, body, {
      method: 'PUT',
      query: 'a=1&b=two',
      headers: { 'x-provider-header': 'kept', 'webhook-id': 'provider-own-id', connection: 'keep-alive' },
    });
    const [received] = await sink.waitForRequests(1);

    expect(received.method).toBe('PUT');
    expect(received.url).toBe('/hooks?source=hooktrail&a=1&b=two');
    expect(received.body.equals(body)).toBe(true);
    expect(received.headers['x-provider-header']).toBe('kept');
    expect(received.headers['webhook-id']).toBe('provider-own-id');
    expect(received.headers['content-type']).toBe('application/json');
    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    const [delivery] = event.deliveries;
    expect(received.headers['hooktrail-id']).toBe(delivery.id);
    expect(Math.abs(Number(received.headers['hooktrail-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
    const verifier = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
    expect(() =>
      verifier.verify(received.body.toString('utf8'), {
        'webhook-id': String(received.headers['hooktrail-id']),
        'webhook-timestamp': String(received.headers['hooktrail-timestamp']),
        'webhook-signature': String(received.headers['hooktrail-signature']),
      }),
    ).not.toThrow();
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempt_count: 1,
      response_code: 200,
      response_body: 'ok',
    });
    expect(delivery.destination.url).toBe(`${sink.url}/hooks?source=hooktrail`);
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ response_code: 200, error: null });
  });

  it('sends no signature header to a destination without a secret', async () => {
    const sink = await destination();
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    await capture(fixture);
    const [received] = await sink.waitForRequests(1);
    expect(received.headers['hooktrail-id']).toBeDefined();
    expect(received.headers['hooktrail-signature']).toBeUndefined();
  });

  it('keeps a Stripe signature verifiable at the destination', async () => {
    const stripeSecret = 'whsec_test_secret';
    const stripe = new Stripe('sk_test_unused');
    const sink = await destination();
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const payload = JSON.stringify(
      { id: 'evt_1', object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1' } } },
      null,
      2,
    );
    const signature = stripe.webhooks.generateTestHeaderString({ payload, secret: stripeSecret });

    await capture(fixture, payload, { headers: { 'stripe-signature': signature } });
    const [received] = await sink.waitForRequests(1);

    const verified = stripe.webhooks.constructEvent(
      received.body,
      String(received.headers['stripe-signature']),
      stripeSecret,
    );
    expect(verified.type).toBe('invoice.paid');
  });

  it('retries a failing destination and records each attempt: 500, 500, 200 is delivered after 3 attempts', async () => {
    const sink = await destination(answer(500, 'boom'), answer(500, 'boom'), answer(200, 'fine'));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const eventId = await capture(fixture);

    const failed = await waitForEvent(sut.url, fixture, eventId, hasStatus('failed'));
    expect(failed.deliveries[0].status).toBe('failed');
    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    const [delivery] = event.deliveries;
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempt_count: 3,
      response_code: 200,
      response_body: 'fine',
    });
    expect(delivery.attempts.map((attempt: { response_code: number }) => attempt.response_code)).toEqual([
      500, 500, 200,
    ]);
    expect(sink.received).toHaveLength(3);
    expect(new Set(sink.received.map((request) => request.headers['hooktrail-id'])).size).toBe(1);
  });

  it('tells the sweeper which deliveries are still owed the attempt it read: not one finished or attempted since', async () => {
    const sink = await destination(answer(200, 'fine'));
    const fixture = await createEndpoint(sut.url);
    const destinationId = await addDestination(sut.url, fixture, sink.url);
    const delivered = (await waitForEvent(sut.url, fixture, await capture(fixture), hasStatus('delivered')))
      .deliveries[0];
    await setPaused(sut.url, fixture, destinationId, true);
    // Held by the pause once the router has made it.
    const waiting = (
      await waitForEvent(sut.url, fixture, await capture(fixture), (seen) => seen.deliveries.length === 1)
    ).deliveries[0];
    expect(waiting).toMatchObject({ status: 'pending', attempt_count: 0 });

    expect(delivered).toMatchObject({ status: 'delivered', attempt_count: 1 });
    const owed = await sut.app.get(OutboxRepository).stillOwed([
      // Read before its attempt, and with the count it has now: finished either way.
      { id: delivered.id, attemptCount: 0 },
      { id: delivered.id, attemptCount: 1 },
      { id: waiting.id, attemptCount: 1 },
      { id: waiting.id, attemptCount: 0 },
    ]);

    expect(owed).toEqual([{ id: waiting.id, attemptCount: 0 }]);
  });

  it('dead-letters after exactly 5 attempts and mails the owner exactly once', async () => {
    const sink = await destination();
    sink.always(answer(500, 'still broken'));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const mailsBefore = smtp.mails.length;
    const eventId = await capture(fixture);

    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('dead_letter'));
    expect(event.deliveries[0]).toMatchObject({
      status: 'dead_letter',
      attempt_count: 5,
      response_code: 500,
    });
    const mails = await smtp.waitForMails(mailsBefore + 1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(sink.received).toHaveLength(5);
    const mine = mails.filter((mail) => mail.to.includes(fixture.user.email));
    expect(mine).toHaveLength(1);
    expect(mine[0].text).toContain(eventId);
    expect(mine[0].text).toContain('Payments');
    expect(mine[0].text).toContain(sink.url);
    expect(mine[0].text).toContain(`/#/endpoints/${fixture.endpointId}/events/${eventId}`);
  });

  it('counts a destination that does not answer in time as failed with no response code', async () => {
    const sink = await destination(() => undefined, answer(200));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const eventId = await capture(fixture);

    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    const [first, second] = event.deliveries[0].attempts;
    expect(first).toMatchObject({ response_code: null, error: 'timed out after 1000 ms' });
    expect(first.duration_ms).toBeGreaterThanOrEqual(950);
    expect(second.response_code).toBe(200);
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const elsewhere = await destination();
    const sink = await destination(answer(302, '', { location: `${elsewhere.url}/moved` }), answer(200));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const eventId = await capture(fixture);

    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    expect(event.deliveries[0].attempts[0]).toMatchObject({
      response_code: 302,
      error: 'redirects are not followed',
    });
    expect(elsewhere.received).toHaveLength(0);
  });

  it('keeps only the first 1 KiB of a response body', async () => {
    const sink = await destination(answer(200, 'x'.repeat(5000)));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const eventId = await capture(fixture);
    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    expect(event.deliveries[0].response_body).toBe('x'.repeat(1024));
  });

  it('keeps a compressed response body decoded (gzip, br) and adds no header of its own', async () => {
    const compressed =
      (status: number, encoding: 'gzip' | 'br', text: string): Responder =>
      (_request, response) => {
        const body = encoding === 'gzip' ? gzipSync(text) : brotliCompressSync(text);
        response.writeHead(status, { 'content-encoding': encoding }).end(body);
      };
    const sink = await destination(compressed(500, 'gzip', 'down: gzip'), compressed(200, 'br', 'fine: br'));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, sink.url);
    const eventId = await capture(fixture, Buffer.from('{}'), { headers: { 'x-only-this': '1' } });

    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    const [first, second] = event.deliveries[0].attempts;
    expect(first).toMatchObject({ response_code: 500, response_body: 'down: gzip' });
    expect(second).toMatchObject({ response_code: 200, response_body: 'fine: br' });
    // The original headers less the hop-by-hop ones, ours, and the framing: nothing the client adds itself.
    const hop = new Set(['host', 'connection', 'content-length']);
    const expected = [
      ...Object.keys(event.headers).filter((name) => !hop.has(name)),
      ...['host', 'connection', 'content-length', 'hooktrail-id', 'hooktrail-timestamp'],
    ];
    expect(Object.keys(sink.received[1].headers).sort()).toEqual(expected.sort());
  });

  it('marks the event delivered when one of two destinations succeeds and the other dead-letters', async () => {
    const good = await destination();
    const bad = await destination();
    bad.always(answer(503));
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, good.url);
    await addDestination(sut.url, fixture, bad.url);
    const eventId = await capture(fixture);

    // Until the router has made them, the event has no deliveries: wait for both, each finished.
    const event = await waitForEvent(
      sut.url,
      fixture,
      eventId,
      (seen) =>
        seen.deliveries.length === 2 &&
        seen.deliveries.every(
          (delivery: { status: string }) =>
            delivery.status === 'delivered' || delivery.status === 'dead_letter',
        ),
    );
    expect(event.status).toBe('delivered');
    expect(event.deliveries.map((delivery: { status: string }) => delivery.status).sort()).toEqual([
      'dead_letter',
      'delivered',
    ]);
  });

  it('reads the deliveries of the events whose status it refreshes through their index, with no statistics yet', async () => {
    const db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    try {
      // As in a new database, or a table that just grew: the planner knows nothing of event_id.
      await db.query(`delete from pg_statistic where starelid = 'deliveries'::regclass`);
      const ids = Array.from({ length: 100 }, () => randomUUID());
      const plan = await queryPlan(db, REFRESH.text, [ids]);
      expect(plan).toContain('Index Cond: (event_id = ids.event_id)');
      expect(plan).not.toContain('Seq Scan on deliveries');
    } finally {
      await db.end();
    }
  });

  it("loads deliveries through the three primary keys, in the generic plan too, whatever the tables' size", async () => {
    const db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    try {
      // As in a new database: the planner knows nothing of the tables, and they are small.
      await db.query(
        `delete from pg_statistic where starelid in ('deliveries'::regclass, 'events'::regclass, 'destinations'::regclass)`,
      );
      const plan = await genericPlan(db, LOAD_FOR_ATTEMPTS.text, ['uuid[]'], [`{${randomUUID()}}`]);
      expect(plan).toContain('Index Cond: (id = ids.id)');
      expect(plan).toContain('Index Cond: (id = d.event_id)');
      expect(plan).toContain('Index Cond: (id = d.destination_id)');
      expect(plan).not.toContain('Seq Scan');
    } finally {
      await db.end();
    }
  });

  it('routes queued events by row address, and reads their events and destinations by primary key', async () => {
    const db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    try {
      await db.query('begin');
      // Of these tables' few rows the planner would scan them all; the plan left without sequential scans
      // is the one large tables get (the queue itself has no index: it is read by row address).
      await db.query('set local enable_seqscan = off');
      const plan = await queryPlan(db, ROUTE_BATCH_SQL, [ROUTE_BATCH]);
      expect(plan).toContain('Tid Scan on routing_queue');
      expect(plan).toMatch(/events_pkey[^\n]*\n\s+Index Cond: \(id = ANY/);
      expect(plan).toMatch(/destinations_pkey[^\n]*\n\s+Index Cond: \(id = target\.id\)/);
      expect(plan).not.toMatch(/Seq Scan on (events|destinations)/);
    } finally {
      await db.query('rollback');
      await db.end();
    }
  });

  it('runs the statements that move events on as prepared statements, which each connection keeps', async () => {
    const knex = sut.app.get(EntityManager).getKnex();
    const ids = [randomUUID()];
    const names = await knex.transaction(async (trx) => {
      await lockEvents(trx, ids);
      // Twice: the second run uses the statement the first prepared.
      await refreshEventStatuses(trx, ids);
      await refreshEventStatuses(trx, ids);
      const { rows } = await trx.raw<{ rows: { name: string }[] }>(
        `select name from pg_prepared_statements order by name`,
      );
      return rows.map((row) => row.name);
    });
    expect(names).toEqual(
      expect.arrayContaining(['hooktrail-lock-events', 'hooktrail-refresh-event-statuses']),
    );
  });

  it('leaves an event with no active destination received, and refuses to replay it', async () => {
    const fixture = await createEndpoint(sut.url);
    const eventId = await capture(fixture);
    const replay = await api(
      sut.url,
      'POST',
      `/api/endpoints/${fixture.endpointId}/events/${eventId}/replay`,
      {
        token: fixture.user.accessToken,
      },
    );
    expect(replay.status).toBe(409);
    expect(replay.body.message).toContain('no active destination');
    const event = await waitForEvent(sut.url, fixture, eventId, () => true);
    expect(event).toMatchObject({ status: 'received', deliveries: [] });
  });

  it('replays a dead letter to the current destinations, including one added after the capture', async () => {
    const broken = await destination();
    broken.always(answer(500));
    const fixture = await createEndpoint(sut.url);
    const brokenId = await addDestination(sut.url, fixture, broken.url);
    const eventId = await capture(fixture, '{"replay":"me"}');
    await waitForEvent(sut.url, fixture, eventId, hasStatus('dead_letter'));

    await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}/destinations/${brokenId}`, {
      token: fixture.user.accessToken,
      body: { is_active: false },
    });
    const added = await destination();
    await addDestination(sut.url, fixture, added.url);
    const first = await api(
      sut.url,
      'POST',
      `/api/endpoints/${fixture.endpointId}/events/${eventId}/replay`,
      {
        token: fixture.user.accessToken,
      },
    );
    const second = await api(
      sut.url,
      'POST',
      `/api/endpoints/${fixture.endpointId}/events/${eventId}/replay`,
      {
        token: fixture.user.accessToken,
      },
    );

    expect(first).toMatchObject({ status: 200, body: { ok: true } });
    expect(second.body.jobId).not.toBe(first.body.jobId);
    const received = await added.waitForRequests(2);
    expect(received[0].body.toString()).toBe('{"replay":"me"}');
    const event = await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    expect(event.deliveries).toHaveLength(3);
    expect(broken.received).toHaveLength(5);
  });

  it('answers 404 to a replay of another user’s event', async () => {
    const owner = await createEndpoint(sut.url);
    const stranger = await createEndpoint(sut.url);
    const eventId = await capture(owner);
    const replay = await api(sut.url, 'POST', `/api/endpoints/${owner.endpointId}/events/${eventId}/replay`, {
      token: stranger.user.accessToken,
    });
    expect(replay.status).toBe(404);
  });

  it('moves two deliveries of one event finishing at once to a consistent status', async () => {
    const sinks = await Promise.all([destination(), destination(), destination(), destination()]);
    const fixture = await createEndpoint(sut.url);
    for (const sink of sinks) await addDestination(sut.url, fixture, sink.url);
    const eventIds = await Promise.all(Array.from({ length: 10 }, () => capture(fixture)));
    const database = new Client({ connectionString: sut.env.DATABASE_URL });
    await database.connect();
    // An event is `delivered` as soon as one of its deliveries is: wait for all 40, then read the statuses.
    const delivered = async () =>
      (
        await database.query<{ n: number }>(
          `select count(*)::int as n from deliveries where event_id = any($1::uuid[]) and status = 'delivered'`,
          [eventIds],
        )
      ).rows[0].n;
    try {
      const deadline = Date.now() + 20_000;
      while ((await delivered()) < 40 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await delivered()).toBe(40);
      for (const eventId of eventIds)
        expect((await getEvent(sut.url, fixture, eventId)).status).toBe('delivered');
    } finally {
      await database.end();
    }
  });
});
