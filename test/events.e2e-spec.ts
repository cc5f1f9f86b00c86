import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Migration20261205000000_event_counts_from_stats as EventCountsFromStats } from '../src/database/migrations/Migration20261205000000_event_counts_from_stats';
import { searchSql } from '../src/events/events.repository';
import { QUEUED_BATCH_SQL, STALE_BATCH_SQL } from '../src/events/search/search-indexer.service';
import { DAY, HOUR, MINUTE } from '../src/stats/stats-windows';
import { api, type ApiResponse, registerUser, type RegisteredUser } from './support/api-client';
import { HttpsDestination } from './support/https-destination';
import { queryPlan, routeQueued } from './support/knex-sql';
import { migrationSql } from './support/migration-sql';
import { startTestApp, type TestApp } from './support/test-app';
import {
  addDestination,
  capture as captureWebhook,
  createEndpoint,
  setPaused,
} from './support/webhook-fixtures';

const T0 = Date.parse('2026-03-01T12:00:00.000Z');
const minutes = (n: number) => new Date(T0 + n * 60_000).toISOString();

describe('events API', () => {
  let sut: TestApp;
  let db: Client;
  let user: RegisteredUser;

  const call = (method: string, path: string) => api(sut.url, method, path, { token: user.accessToken });

  async function createEndpoint(name: string): Promise<{ id: string; token: string }> {
    const response = await api(sut.url, 'POST', '/api/endpoints', {
      token: user.accessToken,
      body: { name },
    });
    return { id: response.body.endpoint.id, token: response.body.endpoint.public_token };
  }

  /** Captures through the real capture URL, then pins received_at (and status) so the filters can be checked. */
  async function capture(
    token: string,
    body: string | Buffer,
    at: string,
    status = 'received',
    contentType = 'application/json',
  ): Promise<string> {
    const response = await fetch(`${sut.url}/in/${token}`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };
    await db.query('update events set received_at = $2, status = $3 where id = $1', [id, at, status]);
    return id;
  }

  const ids = (response: ApiResponse): string[] =>
    (response.body.events as { id: string }[]).map((event) => event.id);

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    user = await registerUser(sut.url);
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  describe('pagination', () => {
    let endpoint: { id: string; token: string };
    const newestFirst: string[] = [];

    beforeAll(async () => {
      endpoint = await createEndpoint('Seven events');
      for (let i = 0; i < 7; i++)
        newestFirst.unshift(await capture(endpoint.token, `{"n":${i}}`, minutes(i)));
    });

    it('splits 7 events into 3 pages of limit 3, newest first, the last page with 1', async () => {
      const pages = await Promise.all(
        [1, 2, 3].map((page) => call('GET', `/api/endpoints/${endpoint.id}/events?limit=3&page=${page}`)),
      );
      expect(pages.map((page) => page.status)).toEqual([200, 200, 200]);
      expect(pages.map((page) => page.body.pagination)).toEqual([
        { page: 1, limit: 3, total: 7, pages: 3 },
        { page: 2, limit: 3, total: 7, pages: 3 },
        { page: 3, limit: 3, total: 7, pages: 3 },
      ]);
      expect(pages.flatMap(ids)).toEqual(newestFirst);
      expect(ids(pages[2])).toHaveLength(1);
    });

    it('defaults to page 1 of 50', async () => {
      const response = await call('GET', `/api/endpoints/${endpoint.id}/events`);
      expect(response.body.pagination).toEqual({ page: 1, limit: 50, total: 7, pages: 1 });
      expect(ids(response)).toEqual(newestFirst);
    });

    it('answers a page past the end with an empty list, not an error', async () => {
      const response = await call('GET', `/api/endpoints/${endpoint.id}/events?limit=3&page=4`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ events: [], pagination: { page: 4, limit: 3, total: 7, pages: 3 } });
    });

    it('counts 0 pages when nothing matches', async () => {
      const empty = await createEndpoint('Empty');
      const response = await call('GET', `/api/endpoints/${empty.id}/events`);
      expect(response.body).toEqual({ events: [], pagination: { page: 1, limit: 50, total: 0, pages: 0 } });
    });

    it('orders events received at the same instant by id, descending, so pages never overlap', async () => {
      const tied = await createEndpoint('Tied');
      const captured = [];
      for (let i = 0; i < 4; i++) captured.push(await capture(tied.token, '{}', minutes(0)));
      const pages = await Promise.all(
        [1, 2].map((page) => call('GET', `/api/endpoints/${tied.id}/events?limit=2&page=${page}`)),
      );
      expect(pages.flatMap(ids)).toEqual([...captured].sort().reverse());
    });

    it('accepts limit 100 and 1', async () => {
      expect((await call('GET', `/api/endpoints/${endpoint.id}/events?limit=100`)).status).toBe(200);
      const one = await call('GET', `/api/endpoints/${endpoint.id}/events?limit=1&page=7`);
      expect(one.body.pagination).toEqual({ page: 7, limit: 1, total: 7, pages: 7 });
      expect(ids(one)).toEqual([newestFirst[6]]);
    });
  });

  describe('filters', () => {
    let endpoint: { id: string; token: string };
    const event: Record<string, string> = {};

    beforeAll(async () => {
      endpoint = await createEndpoint('Filters');
      event.paid = await capture(
        endpoint.token,
        '{"type":"invoice.paid","customer":"cus_123"}',
        minutes(0),
        'delivered',
      );
      event.failedRefund = await capture(
        endpoint.token,
        '{"type":"charge.refunded","note":"Refund issued"}',
        minutes(10),
        'failed',
      );
      event.otherCustomer = await capture(
        endpoint.token,
        '{"type":"invoice.paid","customer":"cus_456"}',
        minutes(20),
        'received',
      );
      event.lookalikes = await capture(
        endpoint.token,
        '{"type":"invoiceXpaid","customer":"cusX123","pct":"1000"}',
        minutes(30),
        'dead_letter',
      );
      event.percent = await capture(
        endpoint.token,
        'discount=100%&path=C:\\temp',
        minutes(40),
        'delivered',
        'text/plain',
      );
      event.binary = await capture(
        endpoint.token,
        Buffer.concat([Buffer.from('refund cus_123 invoice.paid '), Buffer.from([0xff, 0xfe, 0x00])]),
        minutes(50),
        'delivered',
        'application/octet-stream',
      );
    });

    const list = async (query: string) => {
      const response = await call('GET', `/api/endpoints/${endpoint.id}/events?${query}`);
      expect(response.status).toBe(200);
      return response;
    };

    it.each([
      ['status=delivered', ['binary', 'percent', 'paid']],
      ['status=failed', ['failedRefund']],
      ['status=dead_letter', ['lookalikes']],
      ['status=received', ['otherCustomer']],
      [`from=${minutes(20)}`, ['binary', 'percent', 'lookalikes', 'otherCustomer']],
      [`to=${minutes(20)}`, ['failedRefund', 'paid']],
      [`from=${minutes(10)}&to=${minutes(30)}`, ['otherCustomer', 'failedRefund']],
      ['from=2026-03-01', ['binary', 'percent', 'lookalikes', 'otherCustomer', 'failedRefund', 'paid']],
      ['from=2026-03-01T12:20:00', ['binary', 'percent', 'lookalikes', 'otherCustomer']],
      ['from=2026-03-01T13:20:00%2B01:00', ['binary', 'percent', 'lookalikes', 'otherCustomer']],
      ['q=refund', ['failedRefund']],
      ['q=REFUND', ['failedRefund']],
      ['q=cus_123', ['paid']],
      ['q=invoice.paid', ['otherCustomer', 'paid']],
      ['q=Invoice.Paid', ['otherCustomer', 'paid']],
      ['q=100%25', ['percent']],
      ['q=C:%5Ctemp', ['percent']],
      ['q=customer', ['lookalikes', 'otherCustomer', 'paid']],
      ['q=nothing-like-this', []],
      ['q=', ['binary', 'percent', 'lookalikes', 'otherCustomer', 'failedRefund', 'paid']],
      [`status=delivered&q=invoice.paid`, ['paid']],
      [`status=received&q=invoice.paid&from=${minutes(15)}`, ['otherCustomer']],
      [`status=delivered&from=${minutes(0)}&to=${minutes(50)}&q=a`, ['percent', 'paid']],
      [`status=delivered&from=${minutes(1)}&to=${minutes(40)}`, []],
    ])('filters with %s', async (query, expected) => {
      const response = await list(query);
      expect(ids(response)).toEqual(expected.map((name) => event[name]));
      expect(response.body.pagination.total).toBe(expected.length);
    });

    it('counts and pages filtered results', async () => {
      const response = await list('status=delivered&limit=2&page=2');
      expect(response.body.pagination).toEqual({ page: 2, limit: 2, total: 3, pages: 2 });
      expect(ids(response)).toEqual([event.paid]);
    });

    it('lets the indexes serve q: the trigram index for indexed events, a btree for the others (escaped % and _ keep the pattern index-friendly)', async () => {
      const where = searchSql('cus_123');
      await db.query('begin');
      try {
        // Of an endpoint's few rows here the planner would scan them all; over every endpoint's, the only
        // index plan left is the one that a large table gets (a BitmapOr of the two arms' indexes).
        await db.query('set local enable_seqscan = off');
        await db.query('set local enable_indexscan = off');
        const text = await queryPlan(db, `select id from events where ${where.sql}`, [...where.bindings]);
        expect(text).toContain('events_body_text_trgm_index');
        expect(text).toContain('events_unsearchable_index');
        expect(text).toContain('%cus\\_123%');
      } finally {
        await db.query('rollback');
      }
    });

    it('finds an event by q that the search indexer has not marked yet (no worker runs here)', async () => {
      await db.query('update events set searchable = false where id = $1', [event.paid]);
      expect(ids(await list('q=INVOICE.PAID'))).toContain(event.paid);
      expect(ids(await list('status=delivered&q=cus_123'))).toContain(event.paid);
    });

    it.each([
      ['status=bogus', 'status'],
      ['status=delivered&status=failed', 'status'],
      ['from=yesterday', 'from'],
      ['from=2026-02-30', 'from'],
      ['from=2026-03-01T25:00:00Z', 'from'],
      ['from=', 'from'],
      ['from=0000-01-01', 'from'],
      ['to=9999-12-31T23:00:00-05:00', 'to'],
      ['to=1700000000', 'to'],
      ['page=0', 'page'],
      ['page=-1', 'page'],
      ['page=1.5', 'page'],
      ['page=abc', 'page'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      [`q=${'x'.repeat(501)}`, 'q'],
      ['sort=asc', 'sort'],
    ])('refuses %s with 400 naming the parameter', async (query, parameter) => {
      const response = await call('GET', `/api/endpoints/${endpoint.id}/events?${query}`);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('Bad Request');
      const messages: string[] = [].concat(response.body.message);
      expect(
        messages.some(
          (message) => message.startsWith(parameter) || message.includes(`property ${parameter} `),
        ),
      ).toBe(true);
    });
  });

  describe('a search among more than 1,000 matches', () => {
    it('counts the first 1,000 and says so; without q the count stays exact', async () => {
      const endpoint = await createEndpoint('Busy');
      await capture(endpoint.token, '{"type":"needle.rare"}', minutes(0));
      await db.query(
        `insert into events (id, endpoint_id, status, method, headers, query, body_text, received_at)
         select gen_random_uuid(), $1, 'received', 'POST', '{}', '', '{"type":"hay.common","n":' || n || '}',
                now() - make_interval(secs => n)
         from generate_series(1, 1050) as n`,
        [endpoint.id],
      );
      const list = (query: string) => call('GET', `/api/endpoints/${endpoint.id}/events?${query}`);

      const common = await list('q=hay.common&limit=100');
      expect(common.body.pagination).toEqual({
        page: 1,
        limit: 100,
        total: 1000,
        pages: 10,
        total_capped: true,
      });
      expect(common.body.events).toHaveLength(100);
      // Pages past the counted ones still answer: the 50 matches beyond the first 1,000.
      expect((await list('q=hay.common&limit=100&page=11')).body.events).toHaveLength(50);

      expect((await list('q=needle.rare')).body.pagination).toEqual({
        page: 1,
        limit: 50,
        total: 1,
        pages: 1,
      });
      expect((await list('limit=100')).body.pagination).toEqual({
        page: 1,
        limit: 100,
        total: 1051,
        pages: 11,
      });
    });
  });

  describe("counting all of an endpoint's events", () => {
    /** Moves the endpoint's failed events to dead_letter, then deletes `deleted` of its events. */
    async function deadLetterFailedThenDelete(endpointId: string, deleted: number): Promise<void> {
      await db.query(
        `update events set status = 'dead_letter' where endpoint_id = $1 and status = 'failed'`,
        [endpointId],
      );
      await db.query(
        'delete from events where id in (select id from events where endpoint_id = $1 limit $2)',
        [endpointId, deleted],
      );
    }

    it('stays exact, from the statistics day rows, through captures over many days, status changes and deletes', async () => {
      const endpoint = await createEndpoint('Counted');
      // Each capture is stored now, then moved to its day and status: an insert and an update per event.
      for (let n = 0; n < 60; n++)
        await capture(endpoint.token, `{"n":${n}}`, minutes(n * 517), n % 5 === 0 ? 'failed' : 'delivered');
      const dayRows = await db.query(
        `select count(distinct bucket_start)::int as days from endpoint_event_stats where endpoint_id = $1 and span = 'day'`,
        [endpoint.id],
      );
      expect(dayRows.rows[0].days).toBeGreaterThan(20); // the 60 events' days, and today's
      const total = async (query = '') =>
        (await call('GET', `/api/endpoints/${endpoint.id}/events?limit=1${query}`)).body.pagination.total;
      const counted = async (status: string) =>
        (
          await db.query('select count(*)::int as n from events where endpoint_id = $1 and status = $2', [
            endpoint.id,
            status,
          ])
        ).rows[0].n;
      expect([await total(), await total('&status=failed'), await total('&status=delivered')]).toEqual([
        60, 12, 48,
      ]);

      await deadLetterFailedThenDelete(endpoint.id, 7);
      for (const status of ['received', 'delivered', 'failed', 'dead_letter'])
        expect(await total(`&status=${status}`)).toBe(await counted(status));
      expect(await total()).toBe(53);
    });

    it('gives back the event_counts table when its migration is taken back, kept by its triggers, and drops it again', async () => {
      const endpoint = await createEndpoint('Counted, migrated back');
      for (let n = 0; n < 8; n++)
        await capture(endpoint.token, `{"n":${n}}`, minutes(n * 61), n % 3 === 0 ? 'failed' : 'delivered');
      const migration = (step: 'up' | 'down') => migrationSql(sut, EventCountsFromStats, step);
      const counts = async () =>
        (
          await db.query(
            `select status, sum(delta)::int as n from event_counts where endpoint_id = $1
             group by status having sum(delta) <> 0 order by status`,
            [endpoint.id],
          )
        ).rows;
      const exact = async () =>
        (
          await db.query(
            'select status, count(*)::int as n from events where endpoint_id = $1 group by status order by status',
            [endpoint.id],
          )
        ).rows;

      for (const sql of await migration('down')) await db.query(sql);
      // Made again from the events stored, then kept by the triggers through a capture, a status change and a delete.
      expect(await counts()).toEqual([
        { status: 'delivered', n: 5 },
        { status: 'failed', n: 3 },
      ]);
      await capture(endpoint.token, '{"n":8}', minutes(9 * 61));
      await deadLetterFailedThenDelete(endpoint.id, 2);
      expect(await counts()).toEqual(await exact());
      expect((await counts()).reduce((sum, row) => sum + row.n, 0)).toBe(7);

      for (const sql of await migration('up')) await db.query(sql);
      const left = await db.query(
        `select (select count(*)::int from pg_trigger where tgname like 'events_count_%') as triggers,
                to_regclass('event_counts') is null as dropped`,
      );
      expect(left.rows[0]).toEqual({ triggers: 0, dropped: true });
      const listed = await call('GET', `/api/endpoints/${endpoint.id}/events?limit=1`);
      expect(listed.body.pagination.total).toBe(7);
    });
  });

  describe('counting a time range', () => {
    it('counts exactly, from the statistics counters and the index at the ends, on and beside every boundary', async () => {
      const endpoint = await createEndpoint('Ranges');
      const now = Date.now();
      const floor = (at: number, ms: number) => Math.floor(at / ms) * ms;
      const boundaries = [
        now - 30_000,
        floor(now, MINUTE),
        floor(now, MINUTE) - 5 * MINUTE,
        floor(now, HOUR),
        floor(now, HOUR) - HOUR,
        now - 100 * MINUTE,
        floor(now, DAY),
        floor(now, DAY) - 2 * DAY,
        floor(now, DAY) - 9 * DAY + 5 * HOUR,
      ];
      const instants = boundaries.flatMap((at) => [at - 1, at, at + 1]);
      for (const [index, at] of instants.entries())
        await capture(
          endpoint.token,
          `{"n":${index}}`,
          new Date(at).toISOString(),
          index % 3 === 0 ? 'failed' : 'delivered',
        );
      const exact = async (from?: number, to?: number, status?: string) =>
        (
          await db.query(
            `select count(*)::int as n from events where endpoint_id = $1 and ($2::timestamptz is null or received_at >= $2)
               and ($3::timestamptz is null or received_at < $3) and ($4::text is null or status = $4)`,
            [endpoint.id, from && new Date(from), to && new Date(to), status ?? null],
          )
        ).rows[0].n as number;
      const bounds = [undefined, ...instants];
      const mismatches: string[] = [];
      for (const [fromIndex, from] of bounds.entries())
        for (const [toIndex, to] of bounds.entries()) {
          if (from === undefined && to === undefined) continue;
          // A few reversed ranges are enough (they count 0).
          if (from !== undefined && to !== undefined && from > to && (fromIndex + toIndex) % 8 !== 0)
            continue;
          for (const status of (fromIndex + toIndex) % 4 === 0 ? [undefined, 'failed'] : [undefined]) {
            const query = [
              from === undefined ? '' : `&from=${new Date(from).toISOString()}`,
              to === undefined ? '' : `&to=${new Date(to).toISOString()}`,
              status === undefined ? '' : `&status=${status}`,
            ].join('');
            const response = await call('GET', `/api/endpoints/${endpoint.id}/events?limit=1${query}`);
            const expected = await exact(from, to, status);
            if (response.body.pagination.total !== expected)
              mismatches.push(`${query}: ${response.body.pagination.total}, not ${expected}`);
          }
        }
      expect(mismatches).toEqual([]);

      // The whole days of a range are read from the counters (a day's count made wrong on purpose shows).
      const days = `from=${new Date(floor(now, DAY) - 9 * DAY).toISOString()}&to=${new Date(floor(now, DAY)).toISOString()}`;
      const total = async () =>
        (await call('GET', `/api/endpoints/${endpoint.id}/events?limit=1&${days}`)).body.pagination.total;
      const counted = await total();
      await db.query(
        `insert into endpoint_event_stats (endpoint_id, span, bucket_start, shard, received) values ($1, 'day', $2, 0, 1000)
         on conflict (endpoint_id, span, bucket_start, shard) do update set received = endpoint_event_stats.received + 1000`,
        [endpoint.id, new Date(floor(now, DAY) - 2 * DAY)],
      );
      expect(await total()).toBe(counted + 1000);
    });
  });

  describe('one event and its deliveries', () => {
    let endpoint: { id: string; token: string };

    beforeAll(async () => {
      endpoint = await createEndpoint('Detail');
      for (const url of ['https://one.example.com/hook', 'https://two.example.com/hook']) {
        await api(sut.url, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
          token: user.accessToken,
          body: { url },
        });
      }
    });

    it('returns the event with every field and its deliveries, newest first', async () => {
      const response = await fetch(`${sut.url}/in/${endpoint.token}?x=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-signature': 'sig' },
        body: '{"hello":"world"}',
      });
      const { id } = (await response.json()) as { id: string };
      await routeQueued(db);
      // a later dispatch (as a replay makes) of the same event, with one attempt recorded
      await db.query(
        `insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, attempt_count, response_code,
                                 response_body, attempts, last_attempted_at, created_at)
         select gen_random_uuid(), $1, null, 'https://gone.example.com/hook', gen_random_uuid(), 'failed', 1, 500, 'oops',
                $2::jsonb, '2030-01-01T00:00:01Z', '2030-01-01T00:00:00Z'`,
        [
          id,
          JSON.stringify([
            { at: '2030-01-01T00:00:01.000Z', response_code: 500, duration_ms: 12, error: null },
          ]),
        ],
      );

      const detail = await call('GET', `/api/endpoints/${endpoint.id}/events/${id}`);
      expect(detail.status).toBe(200);
      const { deliveries, ...event } = detail.body.event;
      expect(event).toEqual({
        id,
        endpoint_id: endpoint.id,
        status: 'received',
        method: 'POST',
        headers: expect.objectContaining({ 'content-type': 'application/json', 'x-signature': 'sig' }),
        query: 'x=1',
        body: '{"hello":"world"}',
        source_ip: '127.0.0.1',
        verification: { status: 'none', reason: null },
        duplicate_count: 0,
        received_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      expect(deliveries).toHaveLength(3);
      expect(deliveries[0]).toEqual({
        id: expect.any(String),
        event_id: id,
        destination: { id: null, url: 'https://gone.example.com/hook' },
        status: 'failed',
        attempt_count: 1,
        response_code: 500,
        response_body: 'oops',
        last_attempted_at: '2030-01-01T00:00:01.000Z',
        created_at: '2030-01-01T00:00:00.000Z',
        attempts: [{ at: '2030-01-01T00:00:01.000Z', response_code: 500, duration_ms: 12, error: null }],
      });
      expect(
        deliveries
          .slice(1)
          .map((delivery: { destination: { url: string } }) => delivery.destination.url)
          .sort(),
      ).toEqual(['https://one.example.com/hook', 'https://two.example.com/hook']);
      for (const delivery of deliveries.slice(1)) {
        expect(delivery).toMatchObject({
          status: 'pending',
          attempt_count: 0,
          response_code: null,
          attempts: [],
        });
        expect(delivery.destination.id).toEqual(expect.any(String));
      }

      const listed = await call('GET', `/api/endpoints/${endpoint.id}/events/${id}/deliveries`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ deliveries });

      const inList = await call('GET', `/api/endpoints/${endpoint.id}/events`);
      expect(inList.body.events[0]).toEqual(event);
    });

    it('cuts a body over 65,536 characters (bytes when binary) in the list, with body_truncated, and returns it whole by id', async () => {
      const long = await createEndpoint('Long bodies');
      const text = `{"pad":"${'é'.repeat(70_000)}"}`;
      const binary = Buffer.concat([Buffer.from([0xff, 0x00]), randomBytes(70_000)]);
      const captured = {
        text: await capture(long.token, text, minutes(1)),
        binary: await capture(long.token, binary, minutes(2), 'received', 'application/octet-stream'),
        short: await capture(long.token, '{"short":true}', minutes(3)),
      };
      const listed = (await call('GET', `/api/endpoints/${long.id}/events`)).body.events;
      const byId = new Map(listed.map((item: { id: string }) => [item.id, item]));
      expect(byId.get(captured.text)).toMatchObject({ body: text.slice(0, 65_536), body_truncated: true });
      expect(byId.get(captured.binary)).toMatchObject({
        body: binary.subarray(0, 65_536).toString('base64'),
        body_encoding: 'base64',
        body_truncated: true,
      });
      expect(byId.get(captured.short)).toEqual(expect.objectContaining({ body: '{"short":true}' }));
      expect(byId.get(captured.short)).not.toHaveProperty('body_truncated');

      const whole = (await call('GET', `/api/endpoints/${long.id}/events/${captured.text}`)).body.event;
      expect(whole.body).toBe(text);
      expect(whole).not.toHaveProperty('body_truncated');
      const wholeBinary = (await call('GET', `/api/endpoints/${long.id}/events/${captured.binary}`)).body
        .event;
      expect(Buffer.from(wholeBinary.body, 'base64').equals(binary)).toBe(true);
    });

    it('answers 404 for an event id that is not a UUID, unknown, or of another of your endpoints', async () => {
      const other = await createEndpoint('Other');
      const foreignEvent = await capture(other.token, '{}', minutes(0));
      for (const eventId of ['not-an-id', '00000000-0000-4000-8000-000000000000', foreignEvent]) {
        for (const suffix of ['', '/deliveries']) {
          const response = await call('GET', `/api/endpoints/${endpoint.id}/events/${eventId}${suffix}`);
          expect(response.status).toBe(404);
          expect(response.body.message).toBe('event not found');
        }
      }
    });
  });
});

describe('search indexing (a worker runs)', () => {
  let sut: TestApp;
  let db: Client;

  beforeAll(async () => {
    sut = await startTestApp();
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
  });

  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  const searchable = async (id: string) =>
    (await db.query('select searchable from events where id = $1', [id])).rows[0].searchable as boolean;
  const waitUntilSearchable = async (id: string) => {
    const deadline = Date.now() + 5000;
    while (!(await searchable(id)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    return searchable(id);
  };

  it('finds a captured event by q at once, and puts it in the trigram index within 5 s of its 200', async () => {
    const fixture = await createEndpoint(sut.url);
    const id = await captureWebhook(fixture, '{"type":"charge.refunded","customer":"cus_searchable"}');
    const answeredAt = Date.now();
    const search = async () =>
      (
        await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/events?q=cus_searchable`, {
          token: fixture.user.accessToken,
        })
      ).body.events.map((event: { id: string }) => event.id);
    expect(await search()).toEqual([id]);

    let searchable = false;
    while (!searchable && Date.now() - answeredAt < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      searchable = (await db.query('select searchable from events where id = $1', [id])).rows[0].searchable;
    }
    expect(searchable).toBe(true);
    expect(await search()).toEqual([id]);
  });

  it('reads the queue by row address, and the stale events by endpoint through their own index, never every event', async () => {
    expect(await queryPlan(db, QUEUED_BATCH_SQL, [1000])).toContain('Tid Scan on search_queue');
    await db.query('begin');
    try {
      // Of this table's few rows the planner would scan them all; the plan left without sequential scans
      // is the one a large table gets.
      await db.query('set local enable_seqscan = off');
      const stale = await queryPlan(db, STALE_BATCH_SQL, [60, 1000, 1000]);
      // The first endpoint with unmarked events (the walk's next steps are subplans EXPLAIN does not show),
      // each one's stale range, then the rows by their primary key.
      expect(stale).toContain('Index Only Scan using events_unsearchable_index');
      expect(stale).toMatch(
        /Index Cond: \(\(endpoint_id = waiting(_\d)?\.endpoint_id\) AND \(received_at < /,
      );
      expect(stale).toMatch(
        /(Index Scan using|Bitmap Index Scan on) events_pkey[^\n]*\n\s+Index Cond: \(id = ANY/,
      );
    } finally {
      await db.query('rollback');
    }
  });

  it('puts an event in the trigram index with the write that changes its status, not later', async () => {
    const sink = await HttpsDestination.start();
    try {
      const fixture = await createEndpoint(sut.url);
      await addDestination(sut.url, fixture, sink.url);
      const id = await captureWebhook(fixture);
      // The indexer runs once a second; a delivery takes milliseconds, so the status read here changes
      // well before the indexer's next pass would have marked the row.
      let row: { status: string; searchable: boolean } = { status: 'received', searchable: false };
      while (row.status === 'received') {
        await new Promise((resolve) => setTimeout(resolve, 5));
        row = (await db.query('select status, searchable from events where id = $1', [id])).rows[0];
      }
      expect(row).toEqual({ status: 'delivered', searchable: true });
    } finally {
      await sink.close();
    }
  });

  it('queues an event without deliveries for the indexer, leaves one with deliveries to its change of status for 60 s, then indexes it anyway', async () => {
    const held = await createEndpoint(sut.url);
    const destinationId = await addDestination(sut.url, held, 'https://127.0.0.1:9/hooks');
    await setPaused(sut.url, held, destinationId, true);
    const waiting = await captureWebhook(held, '{"customer":"cus_waiting_for_status"}');
    // Captured after the held one: once the indexer has taken this, it has passed over the held one.
    const alone = await captureWebhook(await createEndpoint(sut.url));
    expect(await waitUntilSearchable(alone)).toBe(true);
    expect(await searchable(waiting)).toBe(false);
    // The capture queued the event without deliveries, and the indexer took it off the queue as it marked it.
    const queued = await db.query('select event_id from search_queue where event_id = any($1)', [
      [alone, waiting],
    ]);
    expect(queued.rows).toEqual([]);
    const found = await api(
      sut.url,
      'GET',
      `/api/endpoints/${held.endpointId}/events?q=cus_waiting_for_status`,
      { token: held.user.accessToken },
    );
    expect(found.body.events.map((event: { id: string }) => event.id)).toEqual([waiting]);

    await db.query(`update events set received_at = now() - interval '61 seconds' where id = $1`, [waiting]);
    expect(await waitUntilSearchable(waiting)).toBe(true);
  });

  it('passes over a queued event whose row another transaction holds, and marks it once that one ends', async () => {
    const fixture = await createEndpoint(sut.url);
    const [held, free] = [await captureWebhook(fixture), await captureWebhook(fixture)];
    for (const id of [held, free]) expect(await waitUntilSearchable(id)).toBe(true);
    // Both unmarked again, one of them held by an open transaction (as a repeat's count holds it), then queued.
    await db.query('update events set searchable = false where id = any($1)', [[held, free]]);
    const holder = new Client({ connectionString: sut.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('update events set duplicate_count = duplicate_count + 1 where id = $1', [held]);
      await db.query('insert into search_queue (event_id) select unnest($1::uuid[])', [[held, free]]);

      // A pass that waited for the held row would not commit the other's mark until the holder ended.
      expect(await waitUntilSearchable(free)).toBe(true);
      expect(await searchable(held)).toBe(false);
      const queued = await db.query('select event_id from search_queue where event_id = any($1)', [
        [held, free],
      ]);
      expect(queued.rows).toEqual([{ event_id: held }]);
      await holder.query('commit');
    } finally {
      await holder.end();
    }
    expect(await waitUntilSearchable(held)).toBe(true);
    expect((await db.query('select 1 from search_queue where event_id = $1', [held])).rows).toEqual([]);
  });
});
