import { EntityManager } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { api } from './support/api-client';
import { HttpsDestination, type Responder } from './support/https-destination';
import { eventually } from './support/eventually';
import { whileRetentionDeletes } from './support/retention-race';
import { stopService } from './support/service-process';
import { startTestApp, type TestApp } from './support/test-app';
import { BulkReplayRepository } from '../src/delivery/bulk-replay/bulk-replay.repository';
import { useDeliveryApp } from './support/delivery-app';
import { addDestination, capture, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';
import { acknowledgedIds, captureAtRate } from './reliability/support/provider-load';
import { spawnWorker } from './reliability/support/processes';

const hang: Responder = () => undefined;

const call = (sut: TestApp, fixture: EndpointFixture, method: string, path: string, body?: unknown) =>
  api(sut.url, method, `/api/endpoints/${fixture.endpointId}/bulk-replays${path}`, {
    token: fixture.user.accessToken,
    body,
  });

/** Waits for a bulk replay to end; resolves with it. */
const ended = (sut: TestApp, fixture: EndpointFixture, replayId: string) =>
  eventually(
    async () => (await call(sut, fixture, 'GET', `/${replayId}`)).body.bulk_replay,
    (replay) => replay.status !== 'running',
    30_000,
  );

/** Replays every event of the endpoint in bulk and waits for the replay to end; resolves with it. */
async function replayAllToTheEnd(sut: TestApp, fixture: EndpointFixture) {
  const started = await call(sut, fixture, 'POST', '', {});
  expect(started.status).toBe(202);
  return ended(sut, fixture, started.body.bulk_replay.id);
}

describe('bulk replay', () => {
  let sut: TestApp;
  let db: Client;
  let destination: HttpsDestination;
  const replayRows = async () => (await db.query('select count(*)::int as n from bulk_replays')).rows[0].n;

  beforeAll(async () => {
    destination = await HttpsDestination.start();
    sut = await startTestApp({
      DELIVERY_TIMEOUT_MS: '2000',
      DELIVERY_RETRY_DELAYS_MS: '600000,600000,600000,600000',
    });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
    await destination.close();
  });

  it('counts the matching events (dry run), replays each of them once more to the active destinations, and completes', async () => {
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, `${destination.url}/bulk`);
    const paid: string[] = [];
    for (let n = 0; n < 12; n++) {
      const id = await capture(
        fixture,
        JSON.stringify({ type: n % 3 === 0 ? 'invoice.paid' : 'invoice.created', n }),
      );
      if (n % 3 === 0) paid.push(id);
    }
    await destination.waitForRequests(12);
    const arrived = destination.received.length;

    const everything = await call(sut, fixture, 'POST', '', { dry_run: true });
    expect(everything).toMatchObject({ status: 200, body: { count: 12 } });
    const dryRun = await call(sut, fixture, 'POST', '', { q: 'invoice.paid', dry_run: true });
    expect(dryRun).toMatchObject({ status: 200, body: { count: 4 } });
    expect(await replayRows()).toBe(0);

    const started = await call(sut, fixture, 'POST', '', { q: 'invoice.paid', from: '2020-01-01' });
    expect(started.status).toBe(202);
    expect(started.body.bulk_replay).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      endpoint_id: fixture.endpointId,
      status: 'running',
      filter: { q: 'invoice.paid', from: '2020-01-01T00:00:00.000Z' },
      total: 4,
      done: 0,
      created_at: expect.stringMatching(/Z$/),
      finished_at: null,
    });
    const id = started.body.bulk_replay.id;
    const finished = await eventually(
      async () => (await call(sut, fixture, 'GET', `/${id}`)).body.bulk_replay,
      (replay) => replay.status !== 'running',
      30_000,
    );
    expect(finished).toMatchObject({
      status: 'completed',
      total: 4,
      done: 4,
      finished_at: expect.stringMatching(/Z$/),
    });

    // Each matching event got one more dispatch, and only those; the destination got each once more.
    const replayed = await destination.waitForRequests(arrived + 4);
    const { rows } = await db.query<{ event_id: string; dispatches: number }>(
      'select event_id, count(distinct dispatch_id)::int as dispatches from deliveries where event_id in (select id from events where endpoint_id = $1) group by event_id',
      [fixture.endpointId],
    );
    const dispatches = Object.fromEntries(rows.map((row) => [row.event_id, row.dispatches]));
    for (const [eventId, count] of Object.entries(dispatches))
      expect(count).toBe(paid.includes(eventId) ? 2 : 1);
    const bodies = replayed.slice(arrived).map((request) => JSON.parse(request.body.toString('utf8')).n);
    expect(bodies.sort((a, b) => a - b)).toEqual([0, 3, 6, 9]);

    const listed = await call(sut, fixture, 'GET', '');
    expect(listed.status).toBe(200);
    expect(listed.body.bulk_replays.map((replay: { id: string }) => replay.id)).toEqual([id]);
  });

  it('sends each replayed event only to the destinations whose filter matches it, as a capture would', async () => {
    const fixture = await createEndpoint(sut.url);
    const everything = await addDestination(sut.url, fixture, `${destination.url}/all`);
    const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
      token: fixture.user.accessToken,
      body: { url: `${destination.url}/paid`, filter: { body: { type: 'invoice.paid' } } },
    });
    expect(created.status).toBe(201);
    const paidOnly = created.body.destination.id;
    const types = new Map<string, string>();
    for (let n = 0; n < 6; n++) {
      const type = n % 2 === 0 ? 'invoice.paid' : 'invoice.created';
      types.set(await capture(fixture, JSON.stringify({ type, n })), type);
    }

    const finished = await replayAllToTheEnd(sut, fixture);
    expect(finished).toMatchObject({ status: 'completed', total: 6, done: 6 });

    const { rows } = await db.query<{ event_id: string; destination_id: string; dispatches: number }>(
      `select event_id, destination_id, count(*)::int as dispatches from deliveries
       where event_id in (select id from events where endpoint_id = $1) group by event_id, destination_id`,
      [fixture.endpointId],
    );
    const dispatches = (eventId: string, destinationId: string) =>
      rows.find((row) => row.event_id === eventId && row.destination_id === destinationId)?.dispatches ?? 0;
    for (const [eventId, type] of types) {
      expect([type, dispatches(eventId, everything)]).toEqual([type, 2]);
      expect([type, dispatches(eventId, paidOnly)]).toEqual([type, type === 'invoice.paid' ? 2 : 0]);
    }
  });

  it.each([
    ['a status that is not one', { status: 'lost' }, 'status'],
    ['a from that is not a date', { from: 'yesterday' }, 'from'],
    ['a from in the year 0', { from: '0000-01-01' }, 'from'],
    ['a q that is not a string', { q: 42 }, 'q'],
    ['a dry_run that is not a boolean', { dry_run: 'yes' }, 'dry_run'],
    ['an unknown field', { page: 2 }, 'page'],
  ])('refuses %s with 400 naming the field, and starts nothing', async (_label, body, field) => {
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, destination.url);
    const before = await replayRows();
    const response = await call(sut, fixture, 'POST', '', body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toContain(field);
    expect(await replayRows()).toBe(before);
  });

  it('answers 409 when the endpoint has no active destination, and 404 for an unknown replay', async () => {
    const fixture = await createEndpoint(sut.url);
    await capture(fixture);
    const refused = await call(sut, fixture, 'POST', '', {});
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('no active destination');
    for (const path of ['/00000000-0000-4000-8000-000000000000', '/nope']) {
      expect((await call(sut, fixture, 'GET', path)).status).toBe(404);
      expect((await call(sut, fixture, 'POST', `${path}/cancel`)).status).toBe(404);
    }
  });

  it('waits while a destination has 1,000 deliveries waiting, and a cancel stops it before it dispatched any', async () => {
    const stuck = await HttpsDestination.start(hang);
    try {
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, stuck.url);
      // At a pace the service in the test's own process answers in time while its worker defers the stuck
      // deliveries (a capture not committed within its second gets 503, and this test needs all 1,100).
      const captured = acknowledgedIds(
        await captureAtRate(fixture.captureUrl, { ratePerS: 250, total: 1100 }),
      );
      expect(captured).toHaveLength(1100);

      const started = await call(sut, fixture, 'POST', '', {});
      expect(started.body.bulk_replay).toMatchObject({ status: 'running', total: 1100, done: 0 });
      const id = started.body.bulk_replay.id;
      // The stuck destination's 1,100 deliveries stay waiting (attempts time out, retries are 10 min away).
      await sleep(2000);
      expect((await call(sut, fixture, 'GET', `/${id}`)).body.bulk_replay).toMatchObject({
        status: 'running',
        done: 0,
      });

      const cancelled = await call(sut, fixture, 'POST', `/${id}/cancel`);
      expect(cancelled).toMatchObject({
        status: 200,
        body: { bulk_replay: { status: 'cancelled', done: 0 } },
      });
      expect(cancelled.body.bulk_replay.finished_at).toMatch(/Z$/);
      // Cancelling again changes nothing.
      expect((await call(sut, fixture, 'POST', `/${id}/cancel`)).body.bulk_replay).toEqual(
        cancelled.body.bulk_replay,
      );
      const { rows } = await db.query(
        'select count(distinct dispatch_id)::int as dispatches from deliveries where event_id = any($1)',
        [captured],
      );
      expect(rows[0].dispatches).toBe(1100);
    } finally {
      await stuck.close();
    }
  }, 60_000);

  it('is not held up by a paused destination: what it replays to that one waits for its resume', async () => {
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, destination.url);
    const held = await HttpsDestination.start();
    try {
      const heldId = await addDestination(sut.url, fixture, held.url);
      const paused = await api(
        sut.url,
        'PATCH',
        `/api/endpoints/${fixture.endpointId}/destinations/${heldId}`,
        {
          token: fixture.user.accessToken,
          body: { paused: true },
        },
      );
      expect(paused.status).toBe(200);
      // 600 held by the pause; the replay's own would take the paused backlog past 1,000 in its third chunk.
      const captured = acknowledgedIds(
        await captureAtRate(fixture.captureUrl, { ratePerS: 300, total: 600 }),
      );
      expect(captured).toHaveLength(600);

      const finished = await replayAllToTheEnd(sut, fixture);
      expect(finished).toMatchObject({ status: 'completed', done: 600, total: 600 });
      const { rows } = await db.query(
        `select count(*)::int as waiting from deliveries where destination_id = $1 and status = 'pending'`,
        [heldId],
      );
      expect(rows[0].waiting).toBe(1200);
      expect(held.received).toHaveLength(0);
    } finally {
      await held.close();
    }
  }, 90_000);
});

describe('bulk replay by status', () => {
  // No worker in the API process: a worker started once the replay is made dispatches it, so that the
  // events' statuses can move on in between, as they do while a long replay waits.
  const app = useDeliveryApp({ APP_ROLE: 'api' });

  /** A new endpoint whose one destination is the test server at `path`, and four events captured on it. */
  async function fourEvents(path: string): Promise<{ fixture: EndpointFixture; events: string[] }> {
    const fixture = await createEndpoint(app.sut.url);
    await addDestination(app.sut.url, fixture, `${(await app.server()).url}${path}`);
    const events: string[] = [];
    for (let n = 0; n < 4; n++) events.push(await capture(fixture, JSON.stringify({ n })));
    return { fixture, events };
  }

  it('replays the events that had the status when it was made, whatever their status when their turn comes', async () => {
    const { sut, db } = app;
    const { fixture, events } = await fourEvents('/by-status');
    const [stillFailed, deliveredSince, deadSince, failedSince] = events;
    const setStatus = (status: string, ids: string[]) =>
      db.query('update events set status = $1 where id = any($2)', [status, ids]);
    await setStatus('failed', [stillFailed, deliveredSince, deadSince]);

    const started = await call(sut, fixture, 'POST', '', { status: 'failed' });
    expect(started.body.bulk_replay).toMatchObject({ status: 'running', total: 3, done: 0 });
    await setStatus('delivered', [deliveredSince]);
    await setStatus('dead_letter', [deadSince]);
    await setStatus('failed', [failedSince]);

    const worker = await spawnWorker(sut.env);
    try {
      const finished = await ended(sut, fixture, started.body.bulk_replay.id);
      expect(finished).toMatchObject({ status: 'completed', total: 3, done: 3 });
      // Each event's capture is one dispatch; the replay made one more for each of the three it covers.
      const { rows } = await db.query<{ event_id: string; dispatches: number }>(
        'select event_id, count(distinct dispatch_id)::int as dispatches from deliveries where event_id = any($1) group by event_id',
        [events],
      );
      expect(Object.fromEntries(rows.map((row) => [row.event_id, row.dispatches]))).toEqual({
        [stillFailed]: 2,
        [deliveredSince]: 2,
        [deadSince]: 2,
        [failedSince]: 1,
      });
      expect((await db.query('select count(*)::int as n from bulk_replay_events')).rows[0].n).toBe(0);
    } finally {
      await stopService(worker);
    }
  }, 60_000);

  it('ends a replay without a status filter at its total when some of its events were deleted before their turn', async () => {
    const { sut, db } = app;
    const { fixture, events } = await fourEvents('/deleted-meanwhile');
    const started = await call(sut, fixture, 'POST', '', {});
    expect(started.body.bulk_replay).toMatchObject({ status: 'running', total: 4, done: 0 });
    // As retention would, before the worker comes to them.
    await db.query('delete from events where id = any($1)', [events.slice(1, 3)]);

    const worker = await spawnWorker(sut.env);
    try {
      const finished = await ended(sut, fixture, started.body.bulk_replay.id);
      expect(finished).toMatchObject({ status: 'completed', total: 4, done: 4 });
    } finally {
      await stopService(worker);
    }
  }, 60_000);

  it('passes over an event that retention deletes while a chunk waits for it, instead of failing the chunk', async () => {
    const { sut, db } = app;
    const { fixture, events } = await fourEvents('/deleted-under-a-chunk');
    const started = await call(sut, fixture, 'POST', '', {});
    const replayId = started.body.bulk_replay.id;
    const replays = new BulkReplayRepository(sut.app.get(EntityManager).fork());
    // A retention batch's transaction: the event taken, then deleted while the chunk waits for it.
    const dispatched = await whileRetentionDeletes(sut.env.DATABASE_URL, events[1], () =>
      replays.dispatchNext(replayId, 200),
    );
    expect(dispatched.running).toBe(false);
    const sent = await db.query('select event_id from deliveries where id = any($1) order by event_id', [
      dispatched.deliveryIds,
    ]);
    expect(sent.rows.map((row) => row.event_id)).toEqual(events.filter((id) => id !== events[1]).sort());
    expect((await call(sut, fixture, 'GET', `/${replayId}`)).body.bulk_replay).toMatchObject({
      status: 'completed',
      total: 4,
      done: 4,
    });
  });
});
