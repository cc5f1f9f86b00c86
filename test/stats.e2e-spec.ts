import { Client } from 'pg';
import { Migration20261125020000_endpoint_stats as StatsMigration } from '../src/database/migrations/Migration20261125020000_endpoint_stats';
import { Migration20261128000000_attempt_stats_from_the_worker as WorkerStatsMigration } from '../src/database/migrations/Migration20261128000000_attempt_stats_from_the_worker';
import { addAttemptStats } from '../src/stats/attempt-stats';
import { latencyCellOf, latencyOfCell } from '../src/stats/latency-histogram';
import { api, registerUser } from './support/api-client';
import { HttpsDestination, type Responder } from './support/https-destination';
import { eventually } from './support/eventually';
import { sqlOf } from './support/knex-sql';
import { migrationSql } from './support/migration-sql';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

const WINDOWS = {
  '1h': { buckets: 60, bucketMs: 60_000 },
  '24h': { buckets: 24, bucketMs: 3_600_000 },
  '7d': { buckets: 28, bucketMs: 6 * 3_600_000 },
  '30d': { buckets: 30, bucketMs: 86_400_000 },
} as const;
type Window = keyof typeof WINDOWS;

interface Bucket {
  start: string;
  received: number;
  delivered: number;
  failed: number;
  dead_letter: number;
}

/** The endpoint's events by status, counted in the events table itself. */
async function statusCounts(db: Client, endpointId: string): Promise<Record<string, number>> {
  const { rows } = await db.query<{ status: string; n: number }>(
    'select status, count(*)::int as n from events where endpoint_id = $1 group by status',
    [endpointId],
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** The endpoint's events by status per bucket of `bucketMs` (aligned on the epoch), from the events table. */
async function expectedBuckets(
  db: Client,
  endpointId: string,
  bucketMs: number,
): Promise<Map<number, Bucket>> {
  const { rows } = await db.query<Bucket & { start_ms: string }>(
    `select (extract(epoch from date_bin($2::interval, received_at, timestamptz '1970-01-01 00:00:00+00')) * 1000)::bigint as start_ms,
            count(*) filter (where status = 'received')::int as received,
            count(*) filter (where status = 'delivered')::int as delivered,
            count(*) filter (where status = 'failed')::int as failed,
            count(*) filter (where status = 'dead_letter')::int as dead_letter
     from events where endpoint_id = $1 group by 1`,
    [endpointId, `${bucketMs / 1000} seconds`],
  );
  return new Map(
    rows.map(({ start_ms: startMs, ...counts }) => [
      Number(startMs),
      { ...counts, start: new Date(Number(startMs)).toISOString() },
    ]),
  );
}

/** The destination's attempts as recorded in its deliveries' `attempts`. */
async function recordedAttempts(db: Client, destinationId: string) {
  const { rows } = await db.query<{ code: number | null; duration: number }>(
    `select (a ->> 'response_code')::int as code, (a ->> 'duration_ms')::int as duration
     from deliveries d cross join lateral jsonb_array_elements(d.attempts) a where d.destination_id = $1`,
    [destinationId],
  );
  return rows;
}

/** The value the stats should report for the p-th percentile: the cell of the ceil(p % · n)-th smallest duration. */
function histogramPercentile(durations: number[], p: number): number {
  const sorted = [...durations].sort((a, b) => a - b);
  return latencyOfCell(latencyCellOf(sorted[Math.ceil((p / 100) * sorted.length) - 1]));
}

describe('endpoint statistics', () => {
  let sut: TestApp;
  let db: Client;
  let fixture: EndpointFixture;
  let destinationId: string;
  let destination: HttpsDestination;
  const servers: HttpsDestination[] = [];

  const stats = (window?: string, target: EndpointFixture = fixture) =>
    api(sut.url, 'GET', `/api/endpoints/${target.endpointId}/stats${window ? `?window=${window}` : ''}`, {
      token: target.user.accessToken,
    });

  /**
   * Two connections whose backends have the same `pg_backend_pid() % 8` (the shard a writer took before
   * stats_free_shard), opened until such a pair is found; every connection opened goes to `clients`.
   */
  async function sameShardConnections(clients: Client[]) {
    const connect = async () => {
      const client = new Client({ connectionString: sut.env.DATABASE_URL });
      await client.connect();
      clients.push(client);
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      return { client, shard: rows[0].pid % 8 };
    };
    const holder = await connect();
    let other = await connect();
    while (other.shard !== holder.shard) other = await connect();
    return [holder, other];
  }

  /** Bodies with "ok" get a 200 at once; the others a 503 after 30 ms (so that latencies differ). */
  const routing: Responder = (request, response) => {
    if (request.body.toString().includes('"ok"')) response.writeHead(200).end('ok');
    else setTimeout(() => response.writeHead(503).end('down'), 30);
  };

  beforeAll(async () => {
    // Five attempts: 1.5 s before the first retry (room to pause the destination in between), then quick.
    sut = await startTestApp({ DELIVERY_RETRY_DELAYS_MS: '1500,300,300,300', DELIVERY_TIMEOUT_MS: '2000' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    destination = await HttpsDestination.start(routing);
    servers.push(destination);

    // One endpoint with its events in all four statuses: 6 delivered, 3 dead-lettered (5 attempts each),
    // 4 failed (one attempt, then the destination is paused before the retry), 5 received (held).
    fixture = await createEndpoint(sut.url);
    destinationId = await addDestination(sut.url, fixture, destination.url);
    await Promise.all([
      ...Array.from({ length: 6 }, (_, n) => capture(fixture, `{"kind":"ok","n":${n}}`)),
      ...Array.from({ length: 3 }, (_, n) => capture(fixture, `{"kind":"dead","n":${n}}`)),
    ]);
    await eventually(
      () => statusCounts(db, fixture.endpointId),
      (counts) => counts.delivered === 6 && counts.dead_letter === 3,
      30_000,
    );
    const sent = destination.received.length;
    await Promise.all(Array.from({ length: 4 }, (_, n) => capture(fixture, `{"kind":"retry","n":${n}}`)));
    await destination.waitForRequests(sent + 4);
    const paused = await api(
      sut.url,
      'PATCH',
      `/api/endpoints/${fixture.endpointId}/destinations/${destinationId}`,
      {
        token: fixture.user.accessToken,
        body: { paused: true },
      },
    );
    expect(paused.status).toBe(200);
    await Promise.all(Array.from({ length: 5 }, (_, n) => capture(fixture, `{"kind":"held","n":${n}}`)));
    await eventually(
      () => statusCounts(db, fixture.endpointId),
      (counts) => counts.failed === 4 && counts.received === 5,
      30_000,
    );
  }, 90_000);

  afterAll(async () => {
    await db?.end();
    await sut?.close();
    await Promise.all(servers.map((server) => server.close()));
  });

  it.each(Object.keys(WINDOWS) as Window[])(
    'window %s: every bucket, oldest first, with the events captured in it by status, as the events table has them',
    async (window) => {
      const { buckets: count, bucketMs } = WINDOWS[window];
      const before = Date.now();
      const response = await stats(window);
      const after = Date.now();

      expect(response.status).toBe(200);
      expect(response.body.window).toBe(window);
      const buckets = response.body.buckets as Bucket[];
      expect(buckets).toHaveLength(count);
      const starts = buckets.map((bucket) => Date.parse(bucket.start));
      starts.forEach((start, index) => {
        expect(start % bucketMs).toBe(0);
        if (index > 0) expect(start - starts[index - 1]).toBe(bucketMs);
      });
      // The last bucket is the one now is in.
      expect(starts[count - 1]).toBeGreaterThan(before - bucketMs);
      expect(starts[count - 1]).toBeLessThanOrEqual(after);

      const expected = await expectedBuckets(db, fixture.endpointId, bucketMs);
      const zero = { received: 0, delivered: 0, failed: 0, dead_letter: 0 };
      expect(buckets).toEqual(
        starts.map((start) => expected.get(start) ?? { start: new Date(start).toISOString(), ...zero }),
      );
      const totals = buckets.reduce(
        (sum, bucket) => ({
          received: sum.received + bucket.received,
          delivered: sum.delivered + bucket.delivered,
          failed: sum.failed + bucket.failed,
          dead_letter: sum.dead_letter + bucket.dead_letter,
        }),
        zero,
      );
      expect(totals).toEqual({ received: 5, delivered: 6, failed: 4, dead_letter: 3 });
    },
  );

  it('gives each destination its attempts, 2xx share and latency percentiles, as its deliveries recorded them', async () => {
    const attempts = await recordedAttempts(db, destinationId);
    // 6 delivered at once, 3 dead letters × 5 attempts, 4 first attempts before the pause.
    expect(attempts).toHaveLength(6 + 15 + 4);
    const durations = attempts.map((attempt) => attempt.duration);
    const successes = attempts.filter((attempt) => attempt.code === 200).length;
    expect(successes).toBe(6);

    for (const window of Object.keys(WINDOWS)) {
      const response = await stats(window);
      expect(response.status).toBe(200);
      expect(response.body.destinations).toEqual([
        {
          id: destinationId,
          url: destination.url,
          attempts: attempts.length,
          success_rate: successes / attempts.length,
          p50_ms: histogramPercentile(durations, 50),
          p95_ms: histogramPercentile(durations, 95),
        },
      ]);
    }
    // The 503s took 30 ms or more: the 95th percentile is among them, read within 9 %.
    const p95 = (await stats('1h')).body.destinations[0].p95_ms as number;
    expect(p95).toBeGreaterThanOrEqual(Math.floor(30 / 1.1));
  });

  it("counts an attempt's duration in the latency cell that the database's own function gives it", async () => {
    // Every duration to 5 s, then both sides of each cell boundary to the last cell (about 221 s).
    const durations = Array.from({ length: 5001 }, (_, d) => d);
    for (let cell = 1; cell <= 80; cell += 1) {
      const boundary = Math.round(2 ** (cell / 4) - 1);
      durations.push(boundary - 1, boundary, boundary + 1);
    }
    const { rows } = await db.query<{ d: number; cell: number }>(
      'select d, stats_latency_cell(d) as cell from unnest($1::integer[]) as d',
      [durations],
    );
    expect(rows.filter((row) => latencyCellOf(row.d) !== row.cell)).toEqual([]);
  });

  it('lists a destination without attempts with nulls, and the window defaults to 24h', async () => {
    const idle = await HttpsDestination.start();
    servers.push(idle);
    const idleId = await addDestination(sut.url, fixture, idle.url);
    const response = await stats();
    expect(response.status).toBe(200);
    expect(response.body.window).toBe('24h');
    expect(response.body.buckets).toHaveLength(24);
    expect(response.body.destinations).toHaveLength(2);
    expect(response.body.destinations[1]).toEqual({
      id: idleId,
      url: idle.url,
      attempts: 0,
      success_rate: null,
      p50_ms: null,
      p95_ms: null,
    });
    await api(sut.url, 'DELETE', `/api/endpoints/${fixture.endpointId}/destinations/${idleId}`, {
      token: fixture.user.accessToken,
    });
  });

  it.each(['2h', '', '1H', '24h&window=1h'])('refuses window=%s with 400 naming window', async (window) => {
    const response = await api(
      sut.url,
      'GET',
      `/api/endpoints/${fixture.endpointId}/stats?window=${window}`,
      {
        token: fixture.user.accessToken,
      },
    );
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toContain('window must be one of 1h, 24h, 7d, 30d');
  });

  it("stores a capture while other transactions hold every shard row of the endpoint's current buckets that status changes write", async () => {
    const target = await createEndpoint(sut.url, fixture.user);
    const events = await Promise.all(Array.from({ length: 32 }, (_, n) => capture(target, `{"n":${n}}`)));
    // One open transaction per shard a worker's connection can write (pg_backend_pid() % 8), each having
    // changed an event's status: the rows of the endpoint's current minute, hour and day stay locked.
    const holders: Client[] = [];
    const held = new Set<number>();
    try {
      for (const eventId of events) {
        if (held.size === 8) break;
        const holder = new Client({ connectionString: sut.env.DATABASE_URL });
        await holder.connect();
        holders.push(holder);
        const { rows } = await holder.query<{ pid: number }>('select pg_backend_pid() as pid');
        if (held.has(rows[0].pid % 8)) continue;
        held.add(rows[0].pid % 8);
        await holder.query('begin');
        await holder.query(`update events set status = 'dead_letter' where id = $1`, [eventId]);
      }
      expect(held.size).toBe(8);

      const started = Date.now();
      const answer = await fetch(target.captureUrl, { method: 'POST', body: '{"while":"held"}' });

      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      for (const holder of holders) await holder.end();
    }
  });

  it('lets two transactions from connections of the same shard write counters at once, each in a shard of its own', async () => {
    const target = await createEndpoint(sut.url, fixture.user);
    const [first, second] = [await capture(target, '{"n":1}'), await capture(target, '{"n":2}')];
    // A destination of its own, which nothing else sends to (its endpoint captures nothing).
    const idleId = await addDestination(
      sut.url,
      await createEndpoint(sut.url, fixture.user),
      destination.url,
    );
    const at = new Date();
    const clients: Client[] = [];
    try {
      const [holder, other] = await sameShardConnections(clients);
      await holder.client.query('begin');
      await holder.client.query(`update events set status = 'dead_letter' where id = $1`, [first]);
      // Before, the second waited for the first's commit on the rows of their shard (pg_backend_pid() % 8).
      await other.client.query('begin');
      await other.client.query(`set local statement_timeout = '2s'`);
      await other.client.query(`update events set status = 'dead_letter' where id = $1`, [second]);
      // The worker's attempt counters (stats/attempt-stats.ts): the same rows but for the shard.
      for (const { client } of [holder, other])
        await addAttemptStats(sqlOf(client), [
          { destinationId: idleId, at, durationMs: 5, responseCode: 200 },
        ]);
      await other.client.query('commit');
      await holder.client.query('commit');
    } finally {
      for (const client of clients) await client.end();
    }
    const { rows } = await db.query<{ shard: number; dead: number }>(
      `select shard, dead_letter as dead from endpoint_event_stats where endpoint_id = $1 and span = 'day' and dead_letter > 0`,
      [target.endpointId],
    );
    expect(rows).toHaveLength(2);
    expect(rows.every((row) => row.shard >= 8 && row.dead === 1)).toBe(true);
    const attempts = await db.query<{ shard: number; attempts: number }>(
      `select shard, attempts from destination_attempt_stats where destination_id = $1 and span = 'day'`,
      [idleId],
    );
    expect(attempts.rows).toHaveLength(2);
    expect(attempts.rows.every((row) => row.shard >= 0 && row.shard < 8 && row.attempts === 1)).toBe(true);
  });

  it('takes the attempts of deleted deliveries back out in a shard that no other transaction holds', async () => {
    const own = await createEndpoint(sut.url, fixture.user);
    const ownId = await addDestination(sut.url, own, destination.url);
    await capture(own, '{"kind":"ok"}');
    const delivered = await eventually(
      async () =>
        (
          await db.query<{ id: string; at: string }>(
            `select id, attempts -> 0 ->> 'at' as at from deliveries where destination_id = $1 and status = 'delivered'`,
            [ownId],
          )
        ).rows,
      (rows) => rows.length === 1,
      15_000,
    );
    const clients: Client[] = [];
    try {
      const [holder, other] = await sameShardConnections(clients);
      // A worker's batch holding the rows of its shard, for the same buckets, until it ends.
      await holder.client.query('begin');
      await addAttemptStats(sqlOf(holder.client), [
        { destinationId: ownId, at: new Date(delivered[0].at), durationMs: 5, responseCode: 200 },
      ]);
      // Retention deleting the delivery: before, its trigger wrote the same shard and waited for the holder.
      await other.client.query('begin');
      await other.client.query(`set local statement_timeout = '2s'`);
      await other.client.query('delete from deliveries where id = $1', [delivered[0].id]);
      await other.client.query('commit');
      await holder.client.query('rollback');
    } finally {
      for (const client of clients) await client.end();
    }
    const { rows } = await db.query<{ attempts: number }>(
      `select coalesce(sum(attempts), 0)::int as attempts from destination_attempt_stats where destination_id = $1 and span = 'day'`,
      [ownId],
    );
    expect(rows[0].attempts).toBe(0);
  });

  it('adds the events of every statement through one plpgsql function, whose plan each connection keeps', async () => {
    // A sql function that inserts cannot be inlined: PostgreSQL 15 would plan its body again at each call.
    const { rows } = await db.query<{ language: string; args: number }>(
      `select l.lanname as language, p.pronargs as args
       from pg_proc p join pg_language l on l.oid = p.prolang where p.proname = 'endpoint_event_stats_add'`,
    );
    expect(rows).toEqual([{ language: 'plpgsql', args: 7 }]);
  });

  it('counts a statement that changes some statuses and rewrites others unchanged, writing nothing for the unchanged', async () => {
    // No destination: its events stay received until this test changes them.
    const own = await createEndpoint(sut.url);
    const ids = await Promise.all(Array.from({ length: 6 }, (_, n) => capture(own, `{"n":${n}}`)));
    const statsRows = async () =>
      (
        await db.query(
          `select shard, span, bucket_start, received, delivered, failed, dead_letter
           from endpoint_event_stats where endpoint_id = $1 order by shard, span, bucket_start`,
          [own.endpointId],
        )
      ).rows;
    const before = await statsRows();

    // Every row rewritten, none with a new status: no delta, and no statistics row written.
    await db.query('update events set headers = headers where endpoint_id = $1', [own.endpointId]);
    expect(await statsRows()).toEqual(before);

    // One statement: three delivered, three rewritten as they were.
    await db.query(
      `update events set status = case when id = any($2::uuid[]) then 'delivered' else status end
       where endpoint_id = $1`,
      [own.endpointId, ids.slice(0, 3)],
    );
    const buckets = (await stats('1h', own)).body.buckets as Bucket[];
    const totals = buckets.reduce(
      (sum, bucket) => ({
        received: sum.received + bucket.received,
        delivered: sum.delivered + bucket.delivered,
      }),
      { received: 0, delivered: 0 },
    );
    expect(totals).toEqual({ received: 3, delivered: 3 });
  });

  it("answers 404 for another user's endpoint, an unknown one and a malformed id, 401 without a token", async () => {
    const stranger = await registerUser(sut.url);
    const asStranger = await stats('1h', { ...fixture, user: stranger });
    expect(asStranger.status).toBe(404);
    expect(JSON.stringify(asStranger.body)).not.toContain(destinationId);
    const unknown = await stats('1h', { ...fixture, endpointId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    const malformed = await stats('1h', { ...fixture, endpointId: 'not-an-id' });
    expect(malformed.status).toBe(404);
    const anonymous = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/stats`);
    expect(anonymous.status).toBe(401);
  });

  it('counts the events and attempts stored before the migration ran, and takes deleted events back out', async () => {
    const queries = (Step: typeof StatsMigration | typeof WorkerStatsMigration, step: 'up' | 'down') =>
      migrationSql(sut, Step, step);
    // Nonzero buckets only: the window moves on with the clock between the two reads.
    const counted = (body: Record<string, unknown>) => ({
      buckets: (body.buckets as Bucket[]).filter(
        (bucket) => bucket.received + bucket.delivered + bucket.failed + bucket.dead_letter > 0,
      ),
      destinations: body.destinations,
    });
    const before = counted((await stats('1h')).body);
    expect(before.buckets.length).toBeGreaterThan(0);
    // Everything stored so far is now "from before the migration": the counters go, and come back from the
    // migration's backfill alone.
    // The later migration that moved the attempts' adding to the worker is taken back first and made again after.
    for (const sql of await queries(WorkerStatsMigration, 'down')) await db.query(sql);
    for (const sql of await queries(StatsMigration, 'down')) await db.query(sql);
    for (const sql of await queries(StatsMigration, 'up')) await db.query(sql);
    for (const sql of await queries(WorkerStatsMigration, 'up')) await db.query(sql);
    const { rows } = await db.query<{ shards: number[] }>(
      'select array_agg(distinct shard) as shards from endpoint_event_stats',
    );
    expect(rows[0].shards).toEqual([0]);
    expect(counted((await stats('1h')).body)).toEqual(before);

    await db.query(`delete from events where endpoint_id = $1 and body_text like '%"dead"%'`, [
      fixture.endpointId,
    ]);
    const after = (await stats('30d')).body;
    const totals = (after.buckets as Bucket[]).reduce((sum, bucket) => sum + bucket.dead_letter, 0);
    expect(totals).toBe(0);
    expect(after.destinations[0].attempts).toBe(6 + 4);
    expect(after.destinations[0].success_rate).toBe(6 / 10);
  });
});
