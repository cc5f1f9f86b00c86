import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { EntityManager } from '@mikro-orm/postgresql';
import type { Plan } from '../src/common/plans';
import { PlanRetention } from '../src/config/environment';
import { RetentionRepository } from '../src/retention/retention.repository';
import { api, registerUser } from './support/api-client';
import { eventually } from './support/eventually';
import { whileRetentionDeletes } from './support/retention-race';
import { type ServiceProcess, spawnService, stopService } from './support/service-process';
import { isolatedEnvironment, startTestApp, type TestApp } from './support/test-app';
import { addDestination, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

const DAY_S = 86_400;
const STATUSES = ['received', 'delivered', 'failed', 'dead_letter'] as const;
type Status = (typeof STATUSES)[number];
type PlanDays = Record<Plan, number>;

const DEFAULT_DAYS: PlanDays = { free: 7, starter: 30, pro: 90, team: 365 };
const SHORTER_DAYS: PlanDays = { free: 2, starter: 5, pro: 20, team: 100 };
const asVariable = (days: PlanDays) =>
  Object.entries(days)
    .map(([plan, value]) => `${plan}:${value}`)
    .join(',');

/**
 * Ages of the seeded events, in days: at least half a day from every retention the test sets (2, 3, 5, 7,
 * 10, 20, 30, 60, 100, 365 days), so that the seconds a run takes never move an event across one.
 */
const AGES = [1, 2.5, 4, 6, 8.5, 15, 25, 45, 80, 150, 400];
/** The bulk of one endpoint, several batches of a worker: kept under free:7, deleted under free:2. */
const BULK = { events: 2500, ageDays: 4 };
/** And as many past any retention here: several batches for the two workers to share in the first phase. */
const BULK_EXPIRED = { events: 4500, ageDays: 9 };

/** An endpoint of the matrix: whose plan it is on, and its own retention_days. */
interface EndpointCase {
  label: string;
  ownerPlan: Plan;
  /** Moved into a team (by SQL): on the team plan, whatever its owner's. */
  inTeam?: true;
  retentionDays?: number;
}

const CASES: EndpointCase[] = [
  { label: 'free', ownerPlan: 'free' },
  { label: 'free, 3 days of its own', ownerPlan: 'free', retentionDays: 3 },
  {
    label: 'free, 30 days of its own (longer than the plan: no effect)',
    ownerPlan: 'free',
    retentionDays: 30,
  },
  { label: 'starter', ownerPlan: 'starter' },
  { label: 'pro, 10 days of its own', ownerPlan: 'pro', retentionDays: 10 },
  { label: 'team plan', ownerPlan: 'team' },
  { label: "a free user's endpoint in a team", ownerPlan: 'free', inTeam: true },
  { label: 'in a team, 60 days of its own', ownerPlan: 'free', inTeam: true, retentionDays: 60 },
];

interface SeededEvent {
  id: string;
  endpoint: EndpointCase;
  ageDays: number;
  status: Status;
  /** Replayed this many days ago: its latest delivery was made then. */
  replayedDaysAgo?: number;
}

/** The days an endpoint keeps its events under `days`: its plan's, or its own when shorter. */
function retentionOf(endpoint: EndpointCase, days: PlanDays): number {
  const plan = endpoint.inTeam ? 'team' : endpoint.ownerPlan;
  return Math.min(days[plan], endpoint.retentionDays ?? Infinity);
}

/** Dead letters, and events received or replayed within their endpoint's retention. */
const keptUnder = (days: PlanDays) => (event: SeededEvent) =>
  event.status === 'dead_letter' ||
  Math.min(event.ageDays, event.replayedDaysAgo ?? Infinity) < retentionOf(event.endpoint, days);

/** The value of one series of a Prometheus exposition (0 when absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

async function workerFigures(worker: ServiceProcess): Promise<{ deleted: number; passes: number }> {
  const text = await (await fetch(`http://127.0.0.1:${worker.port}/metrics`)).text();
  return {
    deleted: sample(text, 'hooktrail_retention_deleted_events_total'),
    passes: sample(text, 'hooktrail_retention_passes_total'),
  };
}

const sorted = (ids: Iterable<string>) => [...ids].sort();

describe('retention', () => {
  const variables = isolatedEnvironment({ APP_ROLE: 'api' });
  let sut: TestApp;
  let db: Client;
  const endpoints = new Map<EndpointCase, EndpointFixture>();
  const seeded: SeededEvent[] = [];
  const byId = new Map<string, SeededEvent>();
  /** Events given a delivery (and an AI result), by id. */
  const withDelivery = new Set<string>();

  /** Two APP_ROLE=worker processes of the production build on the test's database, started at once. */
  async function startWorkers(days: PlanDays): Promise<ServiceProcess[]> {
    const env = {
      ...variables,
      APP_ROLE: 'worker',
      LOG_LEVEL: 'info',
      RETENTION_DAYS: asVariable(days),
      RETENTION_INTERVAL_MS: '200',
    };
    const started = await Promise.allSettled([spawnService(env), spawnService(env)]);
    const workers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) {
      await Promise.all(workers.map((worker) => stopService(worker)));
      throw failed.reason;
    }
    return workers;
  }

  async function idsOf(sql: string): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(sql);
    return sorted(rows.map((row) => row.id));
  }

  const storedEvents = () => idsOf('select id from events');

  /** How the stored events differ from `kept`: the events wrongly left and wrongly deleted (a few named). */
  async function differenceFrom(kept: string[]) {
    const stored = await storedEvents();
    const [storedIds, keptIds] = [new Set(stored), new Set(kept)];
    const named = (ids: string[]) => ({
      count: ids.length,
      first: ids.slice(0, 5).map((id) => {
        const event = byId.get(id);
        return event ? `${event.endpoint.label}: ${event.ageDays} days, ${event.status}` : id;
      }),
    });
    return {
      left: named(stored.filter((id) => !keptIds.has(id))),
      deleted: named(kept.filter((id) => !storedIds.has(id))),
    };
  }

  /**
   * Waits until the events left are exactly those `days` keeps, then until every worker has finished two
   * more passes (so that a pass deleting too much would have done so), and checks the events, their
   * deliveries and AI results against what `days` keeps. Returns what the workers say they deleted.
   */
  async function expectRetained(workers: ServiceProcess[], days: PlanDays): Promise<number> {
    const kept = sorted(seeded.filter(keptUnder(days)).map((event) => event.id));
    await eventually(
      () => differenceFrom(kept),
      (difference) => difference.left.count === 0 && difference.deleted.count === 0,
      60_000,
    );
    const passes = await Promise.all(workers.map(async (worker) => (await workerFigures(worker)).passes));
    const figures = await eventually(
      () => Promise.all(workers.map(workerFigures)),
      (now) => now.every((figure, index) => figure.passes >= passes[index] + 2),
    );

    expect(await storedEvents()).toEqual(kept);
    const keptWithDelivery = kept.filter((id) => withDelivery.has(id));
    expect(await idsOf('select event_id as id from deliveries')).toEqual(keptWithDelivery);
    expect(await idsOf('select event_id as id from ai_results')).toEqual(keptWithDelivery);
    return figures.reduce((sum, figure) => sum + figure.deleted, 0);
  }

  /** `replayedDaysAgo`: each event also has a delivery made then (and an AI result). */
  async function seed(
    endpoint: EndpointCase,
    ageDays: number,
    status: Status,
    count = 1,
    replayedDaysAgo?: number,
  ): Promise<void> {
    const events = Array.from({ length: count }, () => ({
      id: randomUUID(),
      endpoint,
      ageDays,
      status,
      replayedDaysAgo,
    }));
    seeded.push(...events);
    for (const event of events) byId.set(event.id, event);
    // Half of them, alternating by age and status (and within a bulk), with a delivery and an AI result.
    const parity = AGES.indexOf(ageDays) + STATUSES.indexOf(status);
    const delivered =
      replayedDaysAgo === undefined ? events.filter((_, index) => (parity + index) % 2 === 0) : events;
    for (const event of delivered) withDelivery.add(event.id);
    await db.query(
      `insert into events (id, endpoint_id, status, method, headers, body_text, received_at, searchable)
       select id, $2, $3, 'POST', '{}', '{"seeded":true}', now() - make_interval(secs => $4), true
       from unnest($1::uuid[]) as ids(id)`,
      [events.map((event) => event.id), endpoints.get(endpoint)!.endpointId, status, ageDays * DAY_S],
    );
    const ids = delivered.map((event) => event.id);
    await db.query(
      `insert into deliveries (id, event_id, destination_url, dispatch_id, status, created_at)
       select gen_random_uuid(), id, 'https://example.com/hooks', gen_random_uuid(),
              case $2 when 'received' then 'pending' else $2 end, now() - make_interval(secs => $3)
       from unnest($1::uuid[]) as ids(id)`,
      [ids, status, (replayedDaysAgo ?? ageDays) * DAY_S],
    );
    await db.query(
      `insert into ai_results (event_id, operation, provider, result)
       select id, 'explain', 'local', 'seeded' from unnest($1::uuid[]) as ids(id)`,
      [ids],
    );
  }

  beforeAll(async () => {
    sut = await startTestApp(variables);
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    const team = await db.query<{ id: string }>(`insert into teams (name) values ('Ops') returning id`);
    for (const endpoint of CASES) {
      const user = await registerUser(sut.url);
      await db.query('update users set plan = $2 where id = $1', [user.id, endpoint.ownerPlan]);
      const fixture = await createEndpoint(sut.url, user);
      endpoints.set(endpoint, fixture);
      if (endpoint.inTeam) {
        await db.query(`insert into team_members (team_id, user_id, role) values ($1, $2, 'owner')`, [
          team.rows[0].id,
          user.id,
        ]);
        await db.query('update endpoints set team_id = $1 where id = $2', [
          team.rows[0].id,
          fixture.endpointId,
        ]);
      }
      if (endpoint.retentionDays !== undefined) {
        const patched = await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}`, {
          token: user.accessToken,
          body: { retention_days: endpoint.retentionDays },
        });
        expect(patched.status).toBe(200);
        expect(patched.body.endpoint.retention_days).toBe(endpoint.retentionDays);
      }
      for (const ageDays of AGES) for (const status of STATUSES) await seed(endpoint, ageDays, status);
    }
    // Dead letters long past the free plan's 7 days, replayed since: one a day ago and retrying, one 4
    // days ago and delivered (kept under free:7, deleted under free:2).
    await seed(CASES[0], 400, 'failed', 1, 1);
    await seed(CASES[0], 400, 'delivered', 1, 4);
    await seed(CASES[0], BULK.ageDays, 'delivered', BULK.events);
    await seed(CASES[0], BULK_EXPIRED.ageDays, 'delivered', BULK_EXPIRED.events);
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await sut?.close();
  });

  it('two workers at once delete exactly the expired events that are not dead letters, with their deliveries, each once', async () => {
    const expired = seeded.filter((event) => !keptUnder(DEFAULT_DAYS)(event)).length;
    expect(expired).toBeGreaterThan(BULK_EXPIRED.events);
    const workers = await startWorkers(DEFAULT_DAYS);
    try {
      const deleted = await expectRetained(workers, DEFAULT_DAYS);

      expect(deleted).toBe(expired);
      const log = workers.map((worker) => worker.output()).join('\n');
      expect(log).toMatch(/retention deleted \d+ expired events \(with their deliveries\) in [\d.]+ s/);
    } finally {
      await Promise.all(workers.map((worker) => stopService(worker)));
    }
  }, 120_000);

  it('keeps the counts true: the events list total and the statistics count only the events left', async () => {
    const fixture = endpoints.get(CASES[0])!;
    const left = await db.query<{ n: number }>(
      'select count(*)::int as n from events where endpoint_id = $1',
      [fixture.endpointId],
    );
    const list = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/events?limit=1`, {
      token: fixture.user.accessToken,
    });
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(left.rows[0].n);

    const stats = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}/stats?window=30d`, {
      token: fixture.user.accessToken,
    });
    expect(stats.status).toBe(200);
    const buckets = stats.body.buckets as Record<string, number>[];
    const counted = buckets.reduce(
      (sum, bucket) => sum + bucket.received + bucket.delivered + bucket.failed + bucket.dead_letter,
      0,
    );
    const inWindow = await db.query<{ n: number }>(
      'select count(*)::int as n from events where endpoint_id = $1 and received_at >= $2',
      [fixture.endpointId, stats.body.buckets[0].start],
    );
    expect(counted).toBe(inWindow.rows[0].n);
  });

  it('follows RETENTION_DAYS: shorter days delete what they no longer keep, and nothing else', async () => {
    const before = (await storedEvents()).length;
    const kept = seeded.filter(keptUnder(SHORTER_DAYS)).length;
    expect(kept).toBeLessThan(before);
    const workers = await startWorkers(SHORTER_DAYS);
    try {
      expect(await expectRetained(workers, SHORTER_DAYS)).toBe(before - kept);
    } finally {
      await Promise.all(workers.map((worker) => stopService(worker)));
    }
  }, 120_000);

  it("reads an endpoint's retention at each batch: one lengthened during a pass stops the pass's deletes", async () => {
    const repository = new RetentionRepository(sut.app.get(EntityManager).fork());
    const retention = new PlanRetention(DEFAULT_DAYS);
    const fixture = await createEndpoint(sut.url);
    const shorten = (days: number | null) =>
      db.query('update endpoints set retention_days = $2 where id = $1', [fixture.endpointId, days]);
    await shorten(3);
    // Four days old: past its own 3 days, within the free plan's 7.
    const ids = Array.from({ length: 5 }, () => randomUUID());
    await db.query(
      `insert into events (id, endpoint_id, status, method, headers, body_text, received_at, searchable)
       select id, $2, 'delivered', 'POST', '{}', '{}', now() - interval '4 days', true
       from unnest($1::uuid[]) as ids(id)`,
      [ids, fixture.endpointId],
    );
    const left = async () =>
      (await db.query('select count(*)::int as n from events where endpoint_id = $1', [fixture.endpointId]))
        .rows[0].n;
    const groups = (await repository.expiringGroups(retention)).filter(
      (group) => group.endpointId === fixture.endpointId,
    );
    expect(groups).toEqual([{ endpointId: fixture.endpointId, status: 'delivered' }]);

    // Its own days removed after the pass listed the group: the plan's 7 days keep the events.
    await shorten(null);
    expect(await repository.deleteBatch(retention, groups[0], null, 2)).toEqual({
      taken: 0,
      deleted: 0,
      last: null,
    });
    expect(await left()).toBe(ids.length);

    await shorten(3);
    const first = await repository.deleteBatch(retention, groups[0], null, 2);
    expect(first.deleted).toBe(2);
    await shorten(null);
    expect(await repository.deleteBatch(retention, groups[0], first.last, 2)).toEqual({
      taken: 0,
      deleted: 0,
      last: null,
    });
    expect(await left()).toBe(ids.length - 2);
    await shorten(3);
    expect((await repository.deleteBatch(retention, groups[0], first.last, 10)).deleted).toBe(3);
    expect(await left()).toBe(0);
  });

  it('answers 404, not 500, to a replay of an event being deleted, and sends nothing', async () => {
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, 'https://example.com/hooks');
    const id = randomUUID();
    await db.query(
      `insert into events (id, endpoint_id, status, method, headers, body_text, received_at, searchable)
       values ($1, $2, 'delivered', 'POST', '{}', '{}', now() - interval '30 days', true)`,
      [id, fixture.endpointId],
    );
    // A retention batch's transaction: the event taken, then deleted while the replay waits for it.
    const replay = await whileRetentionDeletes(sut.env.DATABASE_URL, id, () =>
      api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/events/${id}/replay`, {
        token: fixture.user.accessToken,
      }),
    );
    expect(replay.status).toBe(404);
    expect((await db.query('select id from deliveries where event_id = $1', [id])).rows).toEqual([]);
  });

  it('refuses a malformed RETENTION_DAYS at start-up with one line naming it', async () => {
    const worker = await spawnService(
      { ...variables, APP_ROLE: 'worker', RETENTION_DAYS: 'free:7,pro:90' },
      { waitForHealth: false },
    );
    expect(await worker.exited).toBe(1);
    const lines = worker
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines).toEqual([
      'Configuration error: RETENTION_DAYS must give each plan (free, starter, pro, team) its days from 1 to 3650, ' +
        'e.g. free:7,starter:30,pro:90,team:365 (got "free:7,pro:90")',
    ]);
  });
});
