#!/usr/bin/env node
/* global AbortSignal */
// `npm run bench`: the performance benchmark of Hooktrail (issue 7). Self-contained: it starts the
// production build (APP_ROLE=all, one process) with a database and Redis prefix of its own, an HTTPS sink
// and the reference server ../shared/bench/baseline-capture.js, runs the scenarios with autocannon (the
// steady 200/s with a paced sender, bench/lib/load.js), prints ONE table, writes it to
// bench/results/latest.md, and removes what it made (processes, databases, keys).
//
// Environment (all optional):
//   BENCH_POSTGRES_URL  postgres://postgres@127.0.0.1:5432   server for the two databases it creates
//   BENCH_REDIS_URL     redis://127.0.0.1:6379
//   BENCH_SCENARIOS     capture,rules,delivery,flow,soak,reads,stats  a subset to run only those; retention
//                       (scenario 9) runs only when named
//   BENCH_CAPTURE_SECONDS 20   BENCH_CONNECTIONS 50          scenario 1
//   BENCH_BODIES        realistic: scenario 1 (to the reference and the floor too) and scenario 2's drain send
//                       20,000 different payloads of scenario 3's four kinds (about 1.1 KB, ids of their own)
//                       instead of one 1 KB body again and again (diagnosis: what the search index costs)
//   BENCH_SOAK_SECONDS  300                                   scenario 4 (RSS after it vs after 1 minute)
//   BENCH_READ_EVENTS   1000000                               scenario 3
//   BENCH_STATS_EVENTS  1000000                               scenario 8 (statistics)
//   BENCH_RETENTION_EVENTS 1020000                            scenario 9 (retention; not in the default run)
//   BENCH_SEED_DURING_SOAK 1   seed scenario 3's events while the soak runs (0: one after the other)
//   BENCH_CPU_PROF      1 to write a V8 CPU profile of the service to bench/results/profiles
//                       (read it with `node bench/profile-top.js <file>`)
//   BENCH_APP_ROLE      all; `api` measures capture without the delivery worker (diagnosis only)
//   BENCH_SERVICE_ENTRY another build's main.js, relative to the repository (diagnosis only)
//   BENCH_SETUP_SQL     SQL run on the service's database before the scenarios (diagnosis only)
//   BENCH_NODE_OPTIONS  NODE_OPTIONS for the service, e.g. --max-old-space-size=192 (diagnosis only)
//   BENCH_BASELINE      the reference server (default ../shared/bench/baseline-capture.js beside the clone)
//   BENCH_KEEP_DATABASE 1 to keep the service's database (to EXPLAIN queries on it); dropped otherwise
//   BENCH_SERVICE_LOG   a file to append the service's whole output (its log) to (diagnosis only)
const { randomBytes, createHash } = require('node:crypto');
const { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } = require('node:fs');
const { tmpdir, loadavg, availableParallelism } = require('node:os');
const { join, resolve } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const Queue = require('bull');
const Redis = require('ioredis');
const { Client, Pool } = require('pg');
const {
  ROOT,
  startNode,
  waitForHttp,
  stopProcess,
  sampleRss,
  startSink,
  cpuMeter,
} = require('./lib/processes');
const { webhookBody, constantLoad, markedLoad, signedLoad, joinRuns, now } = require('./lib/load');
const { api, makeCertificate, freePort, runCleanups } = require('./lib/setup');
const { insertChunkSql, realisticBodiesSql, rareEvent, COMMON_WORD } = require('./lib/seed');
const { percentile, ms, mb, count, rate, machine, table } = require('./lib/report');

const env = process.env;
const number = (name, fallback) =>
  env[name] === undefined || env[name] === '' ? fallback : Number(env[name]);
const CONFIG = {
  postgresUrl: (env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, ''),
  redisUrl: env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  scenarios: new Set(
    (env.BENCH_SCENARIOS ?? 'capture,rules,delivery,flow,soak,reads,stats')
      .split(',')
      .map((name) => name.trim()),
  ),
  appRole: env.BENCH_APP_ROLE || 'all',
  captureSeconds: number('BENCH_CAPTURE_SECONDS', 20),
  realisticBodies: env.BENCH_BODIES === 'realistic',
  realisticBodyCount: 20_000,
  connections: number('BENCH_CONNECTIONS', 50),
  warmupSeconds: 3,
  drainEvents: 20_000,
  steadyRate: 200,
  steadySeconds: 30,
  rateLimit: 50,
  rateLimitSeconds: 60,
  noisyEvents: 1000,
  soakSeconds: number('BENCH_SOAK_SECONDS', 300),
  soakRate: 500,
  soakConnections: 20,
  readEvents: number('BENCH_READ_EVENTS', 1_000_000),
  readRequests: 200,
  statsEvents: number('BENCH_STATS_EVENTS', 1_000_000),
  // 2 % of them are dead letters, which are kept: about a million deleted.
  retentionEvents: number('BENCH_RETENTION_EVENTS', 1_020_000),
  statsRequests: 200,
  statsBatches: 100,
  seedDuringSoak: env.BENCH_SEED_DURING_SOAK !== '0',
  cpuProfile: env.BENCH_CPU_PROF === '1',
  keepDatabase: env.BENCH_KEEP_DATABASE === '1',
  /** The whole run stops (and cleans up) past this, whatever happens. */
  deadlineMs: 25 * 60_000,
};
const BASELINE = env.BENCH_BASELINE
  ? resolve(env.BENCH_BASELINE)
  : join(ROOT, '..', 'shared', 'bench', 'baseline-capture.js');
const RESULTS = join(__dirname, 'results');
const BASELINE_QUEUE_KEY = 'baseline:queue';
const READ_CASE_BUDGET_MS = 60_000;

const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const names = {
  serviceDb: `hooktrail_bench_${runId}`,
  baselineDb: `hooktrail_bench_${runId}_baseline`,
  redisPrefix: `hooktrail_bench_${runId}`,
};
const started = Date.now();
const log = (message) =>
  console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);

/** Everything to undo at the end, newest first. */
const cleanups = [];
const rows = [];
const notes = [];
const ledger = { acknowledged: 0, serviceErrors: 0, inFlightAtStop: 0, seededDestinations: [] };

function addRow(scenario, figure, value, target, ok = null) {
  rows.push({ scenario, figure, value, target, ok });
}

async function adminQuery(sql) {
  const client = new Client({ connectionString: `${CONFIG.postgresUrl}/postgres` });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Deliveries of the service's database (open: not yet delivered, not dead, or not yet made: an event still
 * waiting for the router counts as one), those seeded by scenarios 8 and 9 left out.
 */
async function openDeliveries(db) {
  const {
    rows: [row],
  } = await db.query(
    `select count(*) filter (where status in ('pending', 'failed'))::int
              + (select count(*) from routing_queue)::int as open,
            count(*) filter (where status = 'delivered')::int as delivered, count(*)::int as total
     from deliveries where destination_id is null or destination_id <> all($1::uuid[])`,
    [ledger.seededDestinations],
  );
  return row;
}

/** Waits until no delivery is open (bounded by the backlog at ~100/s, at least 60 s); returns the drain. */
async function waitForDrain(db, label) {
  const begin = Date.now();
  if (CONFIG.appRole === 'api') return { backlog: 0, delivered: 0, seconds: 0, open: 0 }; // no worker
  const first = await openDeliveries(db);
  const limitMs = Math.max(60_000, (first.open / 100) * 1000);
  let last = first;
  while (last.open > 0 && Date.now() - begin < limitMs) {
    await sleep(500);
    last = await openDeliveries(db);
  }
  const seconds = (Date.now() - begin) / 1000;
  if (last.open > 0) notes.push(`${label}: ${last.open} deliveries still open after ${seconds.toFixed(0)} s`);
  return { backlog: first.open, delivered: last.delivered - first.delivered, seconds, open: last.open };
}

/** Waits (up to 60 s) for the sink to see every marker of a marked load: capture answered → arrival. */
async function arrivalLatencies(sink, load) {
  const arrivedBy = Date.now() + 60_000;
  let arrivals = await sink.markers();
  while ([...load.answeredAt.keys()].some((marker) => !arrivals.has(marker)) && Date.now() < arrivedBy) {
    await sleep(500);
    arrivals = await sink.markers();
  }
  const latencies = [];
  const afterFirstSecond = [];
  const firstAnsweredAt = Math.min(...load.answeredAt.values());
  let missing = 0;
  for (const [marker, answeredAt] of load.answeredAt) {
    const arrivedAt = arrivals.get(marker);
    if (arrivedAt === undefined) missing += 1;
    else {
      latencies.push(arrivedAt - answeredAt);
      if (answeredAt >= firstAnsweredAt + 1000) afterFirstSecond.push(arrivedAt - answeredAt);
    }
  }
  return { latencies, afterFirstSecond, missing };
}

/**
 * `CONFIG.steadyRate` marked captures a second for `CONFIG.steadySeconds` (markers from `firstMarker`), in
 * the ledger; then each one's capture answered → arrival at the sink.
 */
async function steadyArrivals(captureUrl, sink, firstMarker) {
  const steady = await markedLoad(captureUrl, {
    connections: 50,
    duration: CONFIG.steadySeconds,
    ratePerS: CONFIG.steadyRate,
    firstMarker,
  });
  ledger.acknowledged += steady.ok;
  ledger.serviceErrors += steady.errors;
  return { steady, ...(await arrivalLatencies(sink, steady)) };
}

/** Commands the Redis server ran so far (INFO commandstats; a script's own calls counted as well). */
async function redisCommands(redis) {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

// ---------------------------------------------------------------------------------------------- scenarios

/** The PostgreSQL backends serving a database (their CPU is the database's share of a request). */
const backendsOf = (db, database) => async () =>
  (
    await db.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
      database,
    ])
  ).rows.map((row) => row.pid);

/** Runs a load (constantLoad, or `loader`) while metering the CPU of a process and of its database's backends: µs per 2xx. */
async function meteredLoad(url, load, processPid, backends, loader = constantLoad) {
  const processCpu = cpuMeter(async () => [processPid]);
  const databaseCpu = cpuMeter(backends);
  await Promise.all([processCpu.start(), databaseCpu.start()]);
  const result = await loader(url, load);
  const [processMs, databaseMs] = await Promise.all([processCpu.stop(), databaseCpu.stop()]);
  return {
    ...result,
    processUs: (processMs * 1000) / Math.max(1, result.ok),
    databaseUs: (databaseMs * 1000) / Math.max(1, result.ok),
  };
}

/** Rounds of scenarios 1 and 7: in each, every server takes the load for its share of the time. */
const ROUNDS = 4;

/** One server's turns as one run: its rate over their time, its CPU per 2xx, its answers' percentiles. */
function joinTurns(turns) {
  const joined = joinRuns(turns);
  const sum = (pick) => turns.reduce((total, turn) => total + pick(turn), 0);
  return {
    ...joined,
    duplicates: sum((turn) => turn.duplicates ?? 0),
    processUs: sum((turn) => turn.processUs * turn.ok) / Math.max(1, joined.ok),
    databaseUs: sum((turn) => turn.databaseUs * turn.ok) / Math.max(1, joined.ok),
  };
}

/**
 * A load (constantLoad's, or `loader`'s) on each of `servers` ({url, pid, backends, afterTurn?}) in turn:
 * a warm-up of each, then ROUNDS rounds, the order rotated each round, CONFIG.captureSeconds in all for
 * each server; a server's `afterTurn` runs after each of its runs (Hooktrail's: its delivery backlog
 * drains, so that its worker does not share the others' turns). Until session 51 each server took its
 * load in one go, the reference a minute and a half before Hooktrail: on a machine whose speed drifts
 * within minutes (BENCHMARKS.md, sessions 48 to 50) the drift fell on one side of the ratio; taking turns
 * spreads it over all. Returns, for each server, its turns as one metered run (joinTurns), its warm-up,
 * and the CPU its process used during the others' turns (`asideMs`, which should be little).
 */
async function takingTurns(servers, load, loader = constantLoad) {
  const warmups = [];
  for (const { url, afterTurn } of servers) {
    warmups.push(await loader(url, { ...load, duration: CONFIG.warmupSeconds }));
    await afterTurn?.();
  }
  const turns = servers.map(() => []);
  const asideMs = servers.map(() => 0);
  const duration = CONFIG.captureSeconds / ROUNDS;
  for (let round = 0; round < ROUNDS; round += 1)
    for (let turn = 0; turn < servers.length; turn += 1) {
      const index = (round + turn) % servers.length;
      const { url, pid, backends, afterTurn } = servers[index];
      const aside = servers.map((server) => cpuMeter(async () => [server.pid]));
      await Promise.all(aside.map((meter) => meter.start()));
      turns[index].push(await meteredLoad(url, { ...load, duration }, pid, backends, loader));
      const used = await Promise.all(aside.map((meter) => meter.stop()));
      used.forEach((ms, other) => (asideMs[other] += other === index ? 0 : ms));
      await afterTurn?.();
    }
  return turns.map((runs, index) => ({
    ...joinTurns(runs),
    warmup: warmups[index],
    asideMs: asideMs[index],
  }));
}

/**
 * Hooktrail, the reference and the floor (at `floorUrl`) as takingTurns' servers, in that order; with a
 * delivery worker in the service, Hooktrail's backlog is drained after each of its turns, and its drains
 * are added up in `drains`.
 */
function capturingServers(context, url, floorUrl, drains) {
  const { db } = context;
  const drainAfterTurn = async () => {
    const drain = await waitForDrain(db, 'after a turn');
    drains.backlog += drain.backlog;
    drains.seconds += drain.seconds;
  };
  return [
    { url, pid: context.service.pid, backends: backendsOf(db, names.serviceDb), afterTurn: drainAfterTurn },
    {
      url: context.baselineUrl,
      pid: context.baseline.process.pid,
      backends: backendsOf(db, names.baselineDb),
    },
    { url: floorUrl, pid: context.floor.process.pid, backends: backendsOf(db, names.baselineDb) },
  ];
}

/** A note of the deliveries Hooktrail's worker had left after its turns (capturingServers' `drains`). */
const drainNote = (label, drains) =>
  `${label} left ${count(drains.backlog)} deliveries queued behind the captures of its warm-up and turns ` +
  `(the worker runs in the same process and delivers during the load); they drained after each in ` +
  `${drains.seconds.toFixed(0)} s in all.`;

/** A note of the CPU the servers' processes used while the others took their turns. */
const asideNote = (label, [measured, reference, floor]) =>
  `${label}: while the others took their turns, Hooktrail's process used ${Math.round(measured.asideMs)} ms ` +
  `of CPU, the reference's ${Math.round(reference.asideMs)} ms, the floor's ${Math.round(floor.asideMs)} ms ` +
  `(${ROUNDS} turns of ${CONFIG.captureSeconds / ROUNDS} s each).`;

/** The payloads of scenario 1's and 2's loads: the one 1 KB body, or BENCH_BODIES=realistic's. */
async function capturePayloads(db) {
  if (!CONFIG.realisticBodies) return { body: webhookBody(1024) };
  const { rows } = await db.query(realisticBodiesSql(CONFIG.realisticBodyCount));
  return { bodies: rows.map((row) => row.body_text) };
}

/** What scenario 1's and 2's loads send, for their rows' names. */
const PAYLOADS = CONFIG.realisticBodies
  ? `${count(CONFIG.realisticBodyCount)} realistic ~1.1 KB POSTs (BENCH_BODIES)`
  : '1 KB POST';

/**
 * Scenario 1's and 7's targets: issue [2/6]'s for capture alone (`BENCH_APP_ROLE=api`), issue [1/6]'s for
 * capture while the same process forwards every capture (`APP_ROLE=all`, the default).
 */
const CAPTURE_TARGET =
  CONFIG.appRole === 'api'
    ? { ratio: 1.5, p99Ms: 50, issue: '[2/6]' }
    : { ratio: 0.5, p99Ms: 100, issue: '[1/6]' };

/** The ratio row of a capture scenario, judged by CAPTURE_TARGET. */
function addRatioRow(scenario, ratio) {
  const { ratio: least, issue } = CAPTURE_TARGET;
  addRow(
    scenario,
    'ratio Hooktrail / reference',
    `${ratio.toFixed(2)}×`,
    `≥ ${least}× (issue ${issue})`,
    ratio >= least,
  );
}

/** A capture scenario's p99 target and whether `p99` meets it, for addRow. */
const p99Target = (p99) => [`p99 ≤ ${CAPTURE_TARGET.p99Ms} ms`, p99 <= CAPTURE_TARGET.p99Ms];

async function scenarioCapture(context) {
  const { service, captureUrl, floorUrl, db } = context;
  const load = { connections: CONFIG.connections, ...(await capturePayloads(db)) };
  log(
    `scenario 1: Hooktrail, the reference and the floor (bare node:http, group commit), ` +
      `${CONFIG.connections} connections, ${CONFIG.captureSeconds} s each in ${ROUNDS} turns`,
  );
  const rss = sampleRss(service.pid);
  const loadAvg = loadavg()[0];
  const drains = { backlog: 0, seconds: 0 };
  const runs = await takingTurns(capturingServers(context, captureUrl, floorUrl, drains), load);
  const [measured, reference, bare] = runs;
  const { warmup } = measured;
  const forwarding = CONFIG.appRole !== 'api';
  // Each timed run (the warm-up, every turn) may stop with a request in flight on every connection.
  ledger.acknowledged += warmup.ok + measured.ok;
  ledger.serviceErrors += warmup.errors + measured.errors;
  ledger.inFlightAtStop += CONFIG.connections * (1 + ROUNDS);
  const ratio = measured.perSecond / reference.perSecond;
  const scenario = `1. capture, ${PAYLOADS}, ${CONFIG.connections} conn., ${CONFIG.captureSeconds} s`;
  addRow(scenario, 'Hooktrail requests/s', rate(measured.perSecond));
  addRow(
    scenario,
    `reference requests/s (same run, same load, ${ROUNDS} turns each)`,
    rate(reference.perSecond),
  );
  addRatioRow(scenario, ratio);
  addRow(
    scenario,
    'Hooktrail latency p50 / p99',
    `${ms(measured.p50)} / ${ms(measured.p99)}`,
    ...p99Target(measured.p99),
  );
  addRow(scenario, 'reference latency p50 / p99', `${ms(reference.p50)} / ${ms(reference.p99)}`);
  addRow(
    scenario,
    'floor: the reference with group commit on bare node:http (bench/floor-capture.js), requests/s, ratio to the reference',
    `${rate(bare.perSecond)}, ${(bare.perSecond / reference.perSecond).toFixed(2)}×`,
  );
  addRow(
    scenario,
    'floor latency p50 / p99; CPU per capture, Node + PostgreSQL',
    `${ms(bare.p50)} / ${ms(bare.p99)}; ${Math.round(bare.processUs)} + ${Math.round(bare.databaseUs)} µs`,
  );
  addRow(
    scenario,
    'CPU per stored capture, Hooktrail / reference: Node process + its PostgreSQL backends',
    `${Math.round(measured.processUs)} + ${Math.round(measured.databaseUs)} µs / ` +
      `${Math.round(reference.processUs)} + ${Math.round(reference.databaseUs)} µs`,
  );
  addRow(
    scenario,
    'errors Hooktrail / reference (non-2xx, socket errors, time-outs)',
    `${measured.errors + warmup.errors} / ${reference.errors}`,
    '0',
    measured.errors + warmup.errors === 0,
  );
  notes.push(
    `Scenario 1: 1-minute load average ${loadAvg.toFixed(1)} before its runs (${availableParallelism()} cores; ` +
      'above that, other work shared the machine). ' +
      (forwarding
        ? `Hooktrail's CPU per capture includes the delivery worker's, which forwards the captures during the load; ` +
          `scenarios 1 and 7 are judged by issue [1/6]'s targets for that (issue [2/6]'s, for capture alone, ` +
          'with BENCH_APP_ROLE=api).'
        : `APP_ROLE=api: no delivery worker runs, so the captures are stored and queued for routing, not forwarded.`),
  );
  notes.push(asideNote('Scenario 1', runs));
  if (forwarding) notes.push(drainNote('Scenario 1', drains));
  rss.stop();
  addRow(
    '4. memory (RSS of the service)',
    forwarding
      ? "peak during scenario 1, the drains of its turns' backlogs included"
      : 'peak during scenario 1',
    mb(rss.peak()),
    '≤ 300 MB',
    rss.peak() <= 300 * 1024 * 1024,
  );
}

/** Stripe's signing secret of the ingest rules scenario's endpoint. */
const RULES_SECRET = `whsec_${randomBytes(16).toString('hex')}`;
/** Every this many requests of the rules scenario, the previous one is sent again (a re-delivery). */
const RULES_REPEAT_EVERY = 100;

/** Scenario 7's load: Stripe-signed bodies, each with its own event id but every 100th, a re-delivery. */
const rulesLoad = () => ({
  connections: CONFIG.connections,
  secret: RULES_SECRET,
  repeatEvery: RULES_REPEAT_EVERY,
});

/**
 * Scenario 7: scenario 1's load on an endpoint with ingest rules: Stripe verification (enforced), dedup on
 * Stripe's event id, and two destinations with filters, each request with its own id and signature.
 */
async function scenarioRules(context) {
  const { baseUrl, token, sink, db } = context;
  const { endpoint } = await api(baseUrl, 'POST', '/api/endpoints', {
    token,
    body: {
      name: 'rules',
      verification: { provider: 'stripe', secret: RULES_SECRET, mode: 'enforce' },
      dedup: { key: 'provider' },
    },
  });
  for (const filter of [
    { body: { type: { $startsWith: 'invoice.' } }, headers: { 'content-type': { $contains: 'json' } } },
    { body: { data: { object: { amount_paid: { $gte: 10000 }, currency: { $in: ['usd', 'eur'] } } } } },
  ])
    await api(baseUrl, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
      token,
      body: { url: sink.url, filter },
    });
  const url = `${baseUrl}/in/${endpoint.public_token}`;
  log(
    `scenario 7: ingest rules, Hooktrail, the reference and the floor's /rules, ${CONFIG.connections} ` +
      `connections, ${CONFIG.captureSeconds} s each in ${ROUNDS} turns`,
  );
  const drains = { backlog: 0, seconds: 0 };
  const runs = await takingTurns(
    capturingServers(context, url, context.floorRulesUrl, drains),
    rulesLoad(),
    signedLoad,
  );
  const [measured, reference, floor] = runs;
  notes.push(asideNote('Scenario 7', runs));
  if (CONFIG.appRole !== 'api') notes.push(drainNote('Scenario 7', drains));
  // The workers' router makes an event's deliveries after its capture: counted once every one is made.
  // Without a worker (APP_ROLE=api) they stay queued for routing, with the destinations the filters chose.
  log('scenario 7: waiting for the delivery backlog to drain');
  await waitForDrain(db, 'after scenario 7');
  const { rows } = await db.query(
    `select count(*)::int as events, count(*) filter (where verification_status = 'verified')::int as verified,
            coalesce(sum(duplicate_count), 0)::int
              + (select coalesce(sum(repeats), 0)::int from event_repeats) as repeats,
            (select count(*)::int from deliveries d join events e on e.id = d.event_id where e.endpoint_id = $1)
              + (select coalesce(sum(cardinality(q.destination_ids)), 0)::int
                 from routing_queue q join events e on e.id = q.event_id where e.endpoint_id = $1) as deliveries
     from events where endpoint_id = $1`,
    [endpoint.id],
  );
  const [stored] = rows;
  const scenario = `7. ingest rules: Stripe verification + dedup + 2 filtered destinations, 1 KB POST, ${CONFIG.connections} conn.`;
  addRow(scenario, 'Hooktrail requests/s', rate(measured.perSecond));
  addRow(
    scenario,
    `reference requests/s under the same signed load (same run, ${ROUNDS} turns each)`,
    rate(reference.perSecond),
  );
  addRatioRow(scenario, measured.perSecond / reference.perSecond);
  addRow(
    scenario,
    "floor with the rules' work (bench/floor-capture.js /rules: the Stripe HMAC, the body parsed, the two filters, the dedup claims in Redis, one call a batch), requests/s, ratio to the reference",
    `${rate(floor.perSecond)}, ${(floor.perSecond / reference.perSecond).toFixed(2)}×`,
  );
  addRow(
    scenario,
    "floor with the rules' work: latency p50 / p99; CPU per capture, Node + PostgreSQL; duplicates answered; errors",
    `${ms(floor.p50)} / ${ms(floor.p99)}; ${Math.round(floor.processUs)} + ${Math.round(floor.databaseUs)} µs; ` +
      `${count(floor.duplicates)}; ${floor.errors}`,
  );
  addRow(
    scenario,
    'latency p50 / p99',
    `${ms(measured.p50)} / ${ms(measured.p99)}`,
    ...p99Target(measured.p99),
  );
  addRow(scenario, 'reference latency p50 / p99', `${ms(reference.p50)} / ${ms(reference.p99)}`);
  addRow(
    scenario,
    'CPU per answered capture: Node process + its PostgreSQL backends',
    `${Math.round(measured.processUs)} + ${Math.round(measured.databaseUs)} µs` +
      ` / the reference ${Math.round(reference.processUs)} + ${Math.round(reference.databaseUs)} µs`,
  );
  addRow(
    scenario,
    `events stored, all verified, each with 2 deliveries${CONFIG.appRole === 'api' ? ' (queued for routing: no worker runs)' : ''}; repeats answered as duplicates and counted`,
    `${count(stored.events)} stored, ${count(stored.verified)} verified, ${count(stored.deliveries)} deliveries; ` +
      `${count(measured.duplicates)} duplicates answered, ${count(stored.repeats)} counted`,
    'all verified, 2 each',
    stored.verified === stored.events && stored.deliveries === 2 * stored.events,
  );
  addRow(
    scenario,
    'errors (non-2xx, socket errors, time-outs)',
    String(measured.errors),
    '0',
    measured.errors === 0,
  );
}

async function scenarioDelivery(context) {
  const { service, captureUrl, sink, db, queue, redis } = context;
  const scenario = '2. delivery to the HTTPS sink';
  // The drain's rows say what its captures carried; the steady load's markers are always the 1 KB body.
  const drainScenario = CONFIG.realisticBodies ? `${scenario}, ${PAYLOADS}` : scenario;
  log(`scenario 2: ${count(CONFIG.drainEvents)} captures into a paused queue`);
  await queue.pause();
  const commandsBefore = await redisCommands(redis);
  const burst = await constantLoad(captureUrl, {
    connections: CONFIG.connections,
    amount: CONFIG.drainEvents,
    ...(await capturePayloads(db)),
  });
  ledger.acknowledged += burst.ok;
  ledger.serviceErrors += burst.errors;
  // The router makes each capture's delivery and hands it to Bull in a dispatch job after its commit, which
  // notes it in the dispatches' hash: wait until every delivery is there.
  const queuedBy = Date.now() + 30_000;
  const dispatchesKey = `${names.redisPrefix}:delivery-dispatches`;
  while ((await redis.hlen(dispatchesKey)) < burst.ok && Date.now() < queuedBy) await sleep(200);
  const commandsQueued = await redisCommands(redis);
  await sink.phase('drain');
  // The whole drain's CPU, until every delivery is recorded: less noisy than its rate on a shared machine.
  const meters = [async () => [service.pid], backendsOf(db, names.serviceDb), async () => [sink.pid]].map(
    (pids) => cpuMeter(pids),
  );
  await Promise.all(meters.map((meter) => meter.start()));
  const resumedAt = now();
  await queue.resume();
  log('scenario 2: queue resumed, draining');
  const drainBy = Date.now() + 180_000;
  let stats = await sink.stats();
  while ((stats.phases.drain?.count ?? 0) < burst.ok && Date.now() < drainBy) {
    await sleep(250);
    stats = await sink.stats();
  }
  const drained = stats.phases.drain ?? { count: 0, first: resumedAt, last: resumedAt };
  const perSecond = drained.count / ((drained.last - resumedAt) / 1000);
  addRow(
    drainScenario,
    `deliveries/s, ${count(burst.ok)} queued events (resume → last sink request)`,
    rate(perSecond),
    '≥ 3,000/s',
    perSecond >= 3000 && drained.count >= burst.ok,
  );
  if (drained.count < burst.ok)
    notes.push(`Scenario 2: only ${drained.count} of ${burst.ok} deliveries arrived in 180 s.`);
  notes.push(
    `Scenario 2 drain: first sink request ${ms(drained.first - resumedAt)} after the resume; ` +
      `first → last sink request ${rate(drained.count / ((drained.last - drained.first) / 1000))}; ` +
      `TLS connections the sink accepted so far: ${count(stats.connections)}.`,
  );
  await waitForDrain(db, 'after the scenario 2 burst');
  const [serviceMs, databaseMs, sinkMs] = await Promise.all(meters.map((meter) => meter.stop()));
  const commandsDrained = await redisCommands(redis);
  const perDelivery = (calls) => (calls / Math.max(1, drained.count)).toFixed(1);
  const cpuPerDelivery = (cpuMs) => Math.round((cpuMs * 1000) / Math.max(1, drained.count));
  addRow(
    drainScenario,
    'CPU per delivery, resume → all recorded: the service process (all threads) + its PostgreSQL backends + the sink',
    `${cpuPerDelivery(serviceMs)} + ${cpuPerDelivery(databaseMs)} + ${cpuPerDelivery(sinkMs)} µs`,
  );
  addRow(
    drainScenario,
    'Redis commands per delivery: enqueued (captures) + drained (INFO commandstats, inside scripts too)',
    `${perDelivery(commandsQueued - commandsBefore)} + ${perDelivery(commandsDrained - commandsQueued)}`,
  );

  log(
    `scenario 2: steady ${CONFIG.steadyRate} events/s for ${CONFIG.steadySeconds} s, capture → first attempt`,
  );
  await sink.phase('steady');
  const { steady, latencies, missing } = await steadyArrivals(captureUrl, sink, 1);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  addRow(
    scenario,
    `capture → first attempt at ${CONFIG.steadyRate}/s, p50 / p99 (${count(latencies.length)} events)`,
    `${ms(p50)} / ${ms(p99)}`,
    'p50 ≤ 50 ms, p99 ≤ 250 ms',
    p50 <= 50 && p99 <= 250 && missing === 0,
  );
  notes.push(
    `Scenario 2 steady load: ${rate(steady.perSecond)} achieved, capture p99 ${ms(steady.p99)}; latency = the sink's ` +
      `arrival time of an event's marker minus the time its capture response reached the load generator` +
      (missing ? ` (${missing} never arrived)` : '') +
      '.',
  );
  if (missing > 0) ledger.serviceErrors += missing;
  await waitForDrain(db, 'after the steady load');
}

/**
 * Scenario 5: the capture endpoint's destination limited to `rateLimit`/s gets `rateLimit` × 60 deliveries
 * at once; the sink counts what arrives in each second of the clock while they are paced out.
 */
async function scenarioRateLimit(context) {
  const { captureUrl, sink, db, destinationPath, token, baseUrl } = context;
  const events = CONFIG.rateLimit * CONFIG.rateLimitSeconds;
  const scenario = `5. rate limit ${CONFIG.rateLimit}/s`;
  log(`scenario 5: ${count(events)} captures to a destination limited to ${CONFIG.rateLimit}/s`);
  await api(baseUrl, 'PATCH', destinationPath, { token, body: { rate_limit: CONFIG.rateLimit } });
  await sink.phase('rate');
  const burst = await constantLoad(captureUrl, { connections: 10, amount: events, body: webhookBody(1024) });
  ledger.acknowledged += burst.ok;
  ledger.serviceErrors += burst.errors;
  const arrivedBy = Date.now() + 2 * CONFIG.rateLimitSeconds * 1000;
  let stats = await sink.stats();
  while ((stats.phases.rate?.count ?? 0) < burst.ok && Date.now() < arrivedBy) {
    await sleep(500);
    stats = await sink.stats();
  }
  await api(baseUrl, 'PATCH', destinationPath, { token, body: { rate_limit: null } });
  const phase = stats.phases.rate;
  const spanS = (phase.last - phase.first) / 1000;
  const perSecond = (phase.count - 1) / spanS;
  // Whole seconds only: the first and the last are cut by the start and the end of the backlog.
  const seconds = Object.entries(phase.perSecond)
    .sort(([a], [b]) => Number(a) - Number(b))
    .slice(1, -1)
    .map(([, arrivals]) => arrivals);
  const low = CONFIG.rateLimit * 0.95;
  const high = CONFIG.rateLimit * 1.05;
  addRow(
    scenario,
    `delivered per second over ${spanS.toFixed(1)} s (${count(phase.count)} deliveries, first → last)`,
    rate(perSecond),
    `${CONFIG.rateLimit} ± 5 %`,
    perSecond >= low && perSecond <= high && phase.count >= burst.ok,
  );
  addRow(
    scenario,
    `fewest / most in one whole second (${seconds.length} seconds)`,
    `${Math.min(...seconds)} / ${Math.max(...seconds)}`,
  );
  if (phase.count < burst.ok)
    notes.push(`Scenario 5: only ${phase.count} of ${burst.ok} deliveries arrived in time.`);
  await waitForDrain(db, 'after scenario 5');
}

/** Scenario 6 samples the delivery queue this often, this many times, from the healthy flow's start. */
const FLOW_QUEUE_SAMPLE_MS = 500;
const FLOW_QUEUE_SAMPLES = 16;

/**
 * The Bull queue's jobs waiting / delayed / active every `intervalMs`, `samples` times (where a flow's
 * deliveries waited), as text; a sample Redis did not answer is "?". Never rejects.
 */
async function sampleQueue(queue, intervalMs, samples) {
  const counts = [];
  for (let index = 0; index < samples; index += 1) {
    const [sampled] = await Promise.all([queue.getJobCounts().catch(() => null), sleep(intervalMs)]);
    counts.push(sampled ? `${sampled.waiting}/${sampled.delayed}/${sampled.active}` : '?');
  }
  return counts.join(', ');
}

/**
 * Scenario 6, fair share: another endpoint's 1,000 events wait for a destination that never answers and
 * one that answers after 2 s (2,000 deliveries), while the capture endpoint takes 200 events/s for 30 s;
 * its healthy destination's capture → arrival latency is measured. The noisy endpoint is deleted after.
 */
async function scenarioFairShare(context) {
  const { baseUrl, token, sink, db } = context;
  const scenario = '6. fair share';
  const { endpoint: noisy } = await api(baseUrl, 'POST', '/api/endpoints', {
    token,
    body: { name: 'noisy' },
  });
  for (const path of ['hang', 'slow'])
    await api(baseUrl, 'POST', `/api/endpoints/${noisy.id}/destinations`, {
      token,
      body: { url: new URL(`/${path}`, sink.url).href },
    });
  log(`scenario 6: 1,000 events for a hanging and a 2-s destination, then ${CONFIG.steadyRate}/s healthy`);
  const backlog = await constantLoad(`${baseUrl}/in/${noisy.public_token}`, {
    connections: 10,
    amount: CONFIG.noisyEvents,
    body: webhookBody(1024),
  });
  ledger.serviceErrors += backlog.errors;
  const queueSamples = sampleQueue(context.queue, FLOW_QUEUE_SAMPLE_MS, FLOW_QUEUE_SAMPLES);
  const { latencies, afterFirstSecond, missing } = await steadyArrivals(context.captureUrl, sink, 1_000_000);
  const { noisy: noisyRequests } = await sink.stats();
  await api(baseUrl, 'DELETE', `/api/endpoints/${noisy.id}`, { token });
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  addRow(
    scenario,
    `healthy capture → arrival at ${CONFIG.steadyRate}/s while ${count(2 * backlog.ok)} deliveries wait for a hanging and a 2-s destination, p50 / p99`,
    `${ms(p50)} / ${ms(p99)}`,
    'p99 ≤ 250 ms',
    p99 <= 250 && missing === 0,
  );
  notes.push(
    `Scenario 6: the noisy destinations got ${count(noisyRequests)} requests meanwhile; the healthy p99 ` +
      `without the first second of the flow (the noisy backlog's first dispatch) ${ms(percentile(afterFirstSecond, 99))}` +
      (missing ? `; ${missing} healthy events never arrived` : '') +
      `. The delivery queue's jobs waiting / delayed / active every ${FLOW_QUEUE_SAMPLE_MS} ms from the flow's start: ` +
      (await queueSamples) +
      '.',
  );
  if (missing > 0) ledger.serviceErrors += missing;
  await waitForDrain(db, 'after scenario 6');
}

/**
 * Seeds `total` events into `endpointId` (GIN indexes rebuilt after the inserts); `span` places them in time
 * (insertChunkSql: by default the last 90 days).
 */
async function seedEvents(db, endpointId, { total = CONFIG.readEvents, concurrently = false, span } = {}) {
  const begin = Date.now();
  const { rows: ginIndexes } = await db.query(
    `select indexname, indexdef from pg_indexes where tablename = 'events' and indexdef ilike '% using gin %'`,
  );
  // Rebuilding a GIN index once is several times faster than growing it by a million rows.
  for (const index of ginIndexes)
    await db.query(`drop index ${concurrently ? 'concurrently' : ''} "${index.indexname}"`);
  const chunk = 100_000;
  for (let from = 1; from <= total; from += chunk) {
    await db.query(insertChunkSql(endpointId, from, Math.min(total, from + chunk - 1), total, span));
  }
  const inserted = (Date.now() - begin) / 1000;
  log(`${count(total)} events inserted in ${inserted.toFixed(0)} s; rebuilding GIN indexes`);
  await db.query(`set maintenance_work_mem = '512MB'`);
  for (const index of ginIndexes) {
    await db.query(
      concurrently ? index.indexdef.replace(/^CREATE INDEX/i, 'CREATE INDEX CONCURRENTLY') : index.indexdef,
    );
  }
  await db.query('reset maintenance_work_mem');
  await db.query('vacuum (analyze) events');
  return { seconds: (Date.now() - begin) / 1000, inserted };
}

async function scenarioSoak(context, seeding) {
  const { captureUrl, service, db } = context;
  const firstMinuteMs = Math.min(60, CONFIG.soakSeconds / 5) * 1000;
  log(
    `scenario 4: soak at ${CONFIG.soakRate} requests/s for ${CONFIG.soakSeconds} s${seeding ? ' (scenario 3 seeds meanwhile)' : ''}`,
  );
  const rss = sampleRss(service.pid, 1000);
  const [soak, seeded] = await Promise.all([
    constantLoad(captureUrl, {
      connections: CONFIG.soakConnections,
      duration: CONFIG.soakSeconds,
      overallRate: CONFIG.soakRate,
      body: webhookBody(1024),
    }),
    seeding ? seeding() : Promise.resolve(null),
  ]);
  rss.stop();
  ledger.acknowledged += soak.ok;
  ledger.serviceErrors += soak.errors;
  ledger.inFlightAtStop += CONFIG.soakConnections;
  const atFirstMinute = rss.medianBetween(firstMinuteMs - 10_000, firstMinuteMs);
  const atEnd = rss.medianBetween(CONFIG.soakSeconds * 1000 - 10_000, CONFIG.soakSeconds * 1000 + 5000);
  const growth = (atEnd - atFirstMinute) / atFirstMinute;
  addRow(
    '4. memory (RSS of the service)',
    `soak ${CONFIG.soakSeconds} s at ${CONFIG.soakRate}/s: after ${firstMinuteMs / 1000} s → at the end`,
    `${mb(atFirstMinute)} → ${mb(atEnd)} (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %)`,
    '≤ +10 %',
    growth <= 0.1,
  );
  notes.push(
    `Soak: ${rate(soak.perSecond)} achieved (target ${CONFIG.soakRate}/s), capture p50 ${ms(soak.p50)} / p99 ${ms(soak.p99)}, ` +
      `${soak.errors} errors; peak RSS in the soak ${mb(rss.peak())}` +
      (seeded ? `; scenario 3's seeding ran meanwhile (${seeded.seconds.toFixed(0)} s).` : '.'),
  );
  await waitForDrain(db, 'after the soak');
  return seeded;
}

async function scenarioReads(context, seeded) {
  const { baseUrl, db, readsEndpoint } = context;
  const scenario = `3. reads at ${count(CONFIG.readEvents)} events`;
  if (!seeded) {
    log(`scenario 3: seeding ${count(CONFIG.readEvents)} events`);
    seeded = await seedEvents(db, readsEndpoint.id);
  }
  notes.push(
    `Scenario 3 seeding: ${count(CONFIG.readEvents)} events (Stripe invoice.paid / charge.succeeded, GitHub push, ` +
      `Shopify orders/create; about 1.1 KB each; 93 % delivered, 3 % failed, 2 % dead_letter, 2 % received; 90 days) ` +
      `by INSERT ... SELECT generate_series in ${seeded.inserted.toFixed(0)} s, GIN rebuild + VACUUM ANALYZE, ` +
      `${seeded.seconds.toFixed(0)} s in all.`,
  );
  const token = await freshToken(context);
  const rareCustomer = `cus_${createHash('md5').update('hooktrail-rare-customer').digest('hex').slice(0, 14)}`;
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const cases = [
    ['first page', ''],
    ['page 200', '?page=200'],
    ['status=failed', '?status=failed'],
    ['from (last 7 days)', `?from=${encodeURIComponent(weekAgo)}`],
    [`q, a rare id (1 event)`, `?q=${rareCustomer}`],
    [`q, a common word ("${COMMON_WORD}", 80 %)`, `?q=${COMMON_WORD}`],
  ];
  for (const [label, query] of cases) {
    log(`scenario 3: ${label}`);
    const path = `/api/endpoints/${readsEndpoint.id}/events${query}`;
    const timings = [];
    let body;
    // Bounded: a case stops after READ_CASE_BUDGET_MS even if not all its requests were made.
    const caseDeadline = Date.now() + READ_CASE_BUDGET_MS;
    for (let index = 0; index < CONFIG.readRequests + 5 && Date.now() < caseDeadline; index += 1) {
      const begin = now();
      const response = await fetch(`${baseUrl}${path}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(30_000),
      });
      body = await response.json();
      if (!response.ok) {
        ledger.serviceErrors += 1;
        notes.push(`Scenario 3 ${label}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
        break;
      }
      if (index >= 5) timings.push(now() - begin);
    }
    const p50 = percentile(timings, 50);
    const p95 = percentile(timings, 95);
    const target = query.startsWith('?q=') ? 150 : 50;
    if (timings.length < CONFIG.readRequests) {
      notes.push(
        `Scenario 3 ${label}: only ${timings.length} of ${CONFIG.readRequests} requests fitted in ${READ_CASE_BUDGET_MS / 1000} s.`,
      );
    }
    addRow(
      scenario,
      `${label}: p50 / p95 (total ${count(body?.pagination?.total)})`,
      `${ms(p50)} / ${ms(p95)}`,
      `p95 ≤ ${target} ms`,
      p95 <= target,
    );
    if (query === `?q=${rareCustomer}` && body?.pagination?.total !== 1) {
      notes.push(
        `Scenario 3: the rare id matched ${body?.pagination?.total} events, expected 1 (event ${rareEvent(CONFIG.readEvents)}).`,
      );
    }
  }
}

/** Events of scenario 8 inserted per statement. */
const STATS_SEED_CHUNK = 100_000;

/**
 * Scenario 8's data: `CONFIG.statsEvents` events of one endpoint spread evenly over the last 30 days
 * (90 % delivered, 4 % failed, 4 % received, 2 % dead_letter), each with a delivery to one destination,
 * which is then given one attempt (95 % 200, 5 % 500; 20 to 275 ms). Plain INSERT ... SELECT
 * generate_series and UPDATE statements: they go through the statistics triggers as captures and
 * recorded attempts do. The deliveries are written `delivered` so that the worker leaves them alone.
 */
async function seedStats(db, endpointId, destination) {
  const total = CONFIG.statsEvents;
  for (let from = 1; from <= total; from += STATS_SEED_CHUNK) {
    const to = Math.min(total, from + STATS_SEED_CHUNK - 1);
    await db.query(
      `with ev as (
         insert into events (id, endpoint_id, status, method, headers, body_text, searchable, received_at)
         select gen_random_uuid(), $1,
                case when n % 50 = 0 then 'dead_letter' when n % 25 = 0 then 'failed'
                     when n % 25 = 1 then 'received' else 'delivered' end,
                'POST', '{"content-type":"application/json"}'::jsonb, '{"n":' || n || '}', true,
                now() - interval '30 days' * (n::float8 / $4)
         from generate_series($2::int, $3::int) as n
         returning id, received_at)
       insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, created_at)
       select gen_random_uuid(), id, $5, $6, gen_random_uuid(), 'delivered', received_at from ev`,
      [endpointId, from, to, total, destination.id, destination.url],
    );
    await recordSeededAttempts(db, destination.id, STATS_SEED_CHUNK);
  }
  await db.query('vacuum (analyze) endpoint_event_stats, destination_attempt_stats');
}

/**
 * Gives up to `limit` of the destination's deliveries without an attempt one (95 % 200, 5 % 500; 20 to 275
 * ms), and adds them to the destination's statistics in the same statement, as the worker does when it
 * records attempts (shard 0, each bucket's latency histogram built with the database's own functions).
 * Their deliveries are left out of the ledger: nothing was sent. Returns how many.
 */
async function recordSeededAttempts(db, destinationId, limit) {
  if (!ledger.seededDestinations.includes(destinationId)) ledger.seededDestinations.push(destinationId);
  const {
    rows: [{ moved }],
  } = await db.query(
    `with attempted as (
       update deliveries d set attempt_count = 1, last_attempted_at = d.created_at,
         attempts = jsonb_build_array(jsonb_build_object(
           'at', d.created_at, 'response_code', case when abs(hashtext(d.id::text)) % 20 = 0 then 500 else 200 end,
           'duration_ms', 20 + abs(hashtext(d.id::text)) % 256, 'error', null, 'response_body', null))
       where d.id in (select id from deliveries where destination_id = $1 and attempt_count = 0 limit $2)
       returning d.created_at as at, (d.attempts -> 0 ->> 'response_code')::int as code,
                 (d.attempts -> 0 ->> 'duration_ms')::int as duration_ms),
     cells as (
       select spans.span, date_trunc(spans.span, at, 'UTC') as bucket_start, stats_latency_cell(duration_ms) as cell,
              count(*)::int as attempts, count(*) filter (where code between 200 and 299)::int as successes
       from attempted cross join (values ('minute'), ('hour'), ('day')) as spans(span)
       group by 1, 2, 3),
     added as (
       insert into destination_attempt_stats as s
         (destination_id, span, bucket_start, shard, attempts, successes, latency)
       select $1, span, bucket_start, 0, sum(attempts), sum(successes),
              stats_histogram_of(array_agg(cell), array_agg(attempts))
       from cells group by 1, 2, 3
       on conflict (destination_id, span, bucket_start, shard) do update set
         attempts = s.attempts + excluded.attempts, successes = s.successes + excluded.successes,
         latency = stats_histogram_add(s.latency, excluded.latency))
     select count(*)::int as moved from attempted`,
    [destinationId, limit],
  );
  return moved;
}

/** Scenario 8's measure of the trigger on the capture path: one 500-event insert, with and without it. */
async function statsTriggerCost(db, endpointId) {
  const insert = `insert into events (id, endpoint_id, method, headers, body_text, searchable)
                  select gen_random_uuid(), $1, 'POST', '{}'::jsonb, '{"n":' || n || '}', true
                  from generate_series(1, 500) as n`;
  const timings = { with: [], without: [] };
  const client = await db.connect();
  try {
    for (let batch = 0; batch < CONFIG.statsBatches; batch += 1) {
      for (const mode of batch % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
        if (mode === 'without') await client.query('alter table events disable trigger events_stats_insert');
        const begin = now();
        await client.query(insert, [endpointId]);
        timings[mode].push(now() - begin);
        if (mode === 'without') await client.query('alter table events enable trigger events_stats_insert');
      }
    }
  } finally {
    await client.query('alter table events enable trigger events_stats_insert').catch(() => undefined);
    client.release();
  }
  return timings;
}

/**
 * Scenario 8: GET /api/endpoints/:id/stats at `CONFIG.statsEvents` events (and as many attempts) spread
 * over 30 days, each window `CONFIG.statsRequests` times (after 5 unmeasured); then what the statistics
 * trigger adds to a capture batch.
 */
async function scenarioStats(context) {
  const { baseUrl, db, sink } = context;
  // The soak and the seeding before it outlast the first access token on a slow day.
  const token = await freshToken(context);
  const scenario = `8. statistics at ${count(CONFIG.statsEvents)} events and attempts (30 days)`;
  const { endpoint } = await api(baseUrl, 'POST', '/api/endpoints', { token, body: { name: 'stats' } });
  const { destination } = await api(baseUrl, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
    token,
    body: { url: `${sink.url}/stats` },
  });
  log(`scenario 8: seeding ${count(CONFIG.statsEvents)} events with one attempt each`);
  const seedBegin = Date.now();
  await seedStats(db, endpoint.id, destination);
  const seconds = (Date.now() - seedBegin) / 1000;
  const {
    rows: [rowCounts],
  } = await db.query(
    `select (select count(*) from endpoint_event_stats where endpoint_id = $1)::int as event_rows,
            (select count(*) from destination_attempt_stats where destination_id = $2)::int as attempt_rows`,
    [endpoint.id, destination.id],
  );
  notes.push(
    `Scenario 8 seeding: ${count(CONFIG.statsEvents)} events and attempts by INSERT ... SELECT generate_series ` +
      `(events' counters by their triggers) and an UPDATE adding its attempts' counters in ${seconds.toFixed(0)} s; counter rows: ${count(rowCounts.event_rows)} ` +
      `(events), ${count(rowCounts.attempt_rows)} (attempts).`,
  );
  for (const window of ['1h', '24h', '7d', '30d']) {
    log(`scenario 8: window ${window}`);
    const timings = [];
    let body;
    const caseDeadline = Date.now() + READ_CASE_BUDGET_MS;
    for (let index = 0; index < CONFIG.statsRequests + 5 && Date.now() < caseDeadline; index += 1) {
      const begin = now();
      const response = await fetch(`${baseUrl}/api/endpoints/${endpoint.id}/stats?window=${window}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(30_000),
      });
      body = await response.json();
      if (!response.ok) {
        ledger.serviceErrors += 1;
        notes.push(`Scenario 8 ${window}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
        break;
      }
      if (index >= 5) timings.push(now() - begin);
    }
    const p95 = percentile(timings, 95);
    const events = (body?.buckets ?? []).reduce(
      (sum, bucket) => sum + bucket.received + bucket.delivered + bucket.failed + bucket.dead_letter,
      0,
    );
    const attempts = body?.destinations?.[0]?.attempts ?? 0;
    addRow(
      scenario,
      `window ${window}: p50 / p95 (${count(events)} events, ${count(attempts)} attempts)`,
      `${ms(percentile(timings, 50))} / ${ms(p95)}`,
      'p95 ≤ 50 ms',
      p95 <= 50,
    );
  }
  const timings = await statsTriggerCost(db, endpoint.id);
  addRow(
    scenario,
    'insert of a 500-event batch, p50: with / without the stats trigger',
    `${ms(percentile(timings.with, 50))} / ${ms(percentile(timings.without, 50))}`,
  );
}

/** Scenario 9's events: received over 30 days, ending 2 days ago, past its endpoint's retention of 1 day. */
const RETENTION_SPAN = { days: 30, olderThanDays: 2 };
/** How long scenario 9 waits for the deletion to finish once its measures are done. */
const RETENTION_DRAIN_MS = 10 * 60_000;

/** An access token of the bench user made now: the soak, the seeding and the deletion outlast the first one. */
async function freshToken(context) {
  const session = await api(context.baseUrl, 'POST', '/api/auth/login', { body: context.credentials });
  return session.accessToken;
}

/** Events the service's retention deleted so far (its delivery thread's counter, merged into /metrics). */
async function retentionDeleted(baseUrl) {
  const text = await (await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const series = 'hooktrail_retention_deleted_events_total ';
  const line = text.split('\n').find((candidate) => candidate.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

/** Scenario 9's data: `CONFIG.retentionEvents` events (scenario 3's kinds and statuses), one delivery each, with one attempt. */
async function seedRetention(db, endpointId, destination) {
  const seeded = await seedEvents(db, endpointId, { total: CONFIG.retentionEvents, span: RETENTION_SPAN });
  await db.query(
    `insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, created_at)
     select gen_random_uuid(), id, $2, $3, gen_random_uuid(), 'delivered', received_at from events where endpoint_id = $1`,
    [endpointId, destination.id, destination.url],
  );
  while ((await recordSeededAttempts(db, destination.id, STATS_SEED_CHUNK)) > 0);
  await db.query('vacuum (analyze) events, deliveries');
  return seeded;
}

/** The tables of the service's database a vacuum (an autovacuum, mostly) is working on now. */
async function vacuuming(db) {
  const { rows } = await db.query(
    `select p.relid::regclass::text as name from pg_stat_progress_vacuum p
     join pg_database d on d.oid = p.datid where d.datname = $1`,
    [names.serviceDb],
  );
  return rows.map((row) => row.name);
}

/**
 * Scenario 1's load (after its warm-up) on the capture URL, metered and counted in the ledger; its errors
 * include the warm-up's. `vacuumed`: the tables being vacuumed at its start or its end.
 */
async function measuredCapture(context) {
  const { captureUrl, service, db } = context;
  const load = { connections: CONFIG.connections, body: webhookBody(1024) };
  const warmup = await constantLoad(captureUrl, { ...load, duration: CONFIG.warmupSeconds });
  const vacuumedAtStart = await vacuuming(db);
  const measured = await meteredLoad(
    captureUrl,
    { ...load, duration: CONFIG.captureSeconds },
    service.pid,
    backendsOf(db, names.serviceDb),
  );
  const vacuumed = [...new Set([...vacuumedAtStart, ...(await vacuuming(db))])];
  for (const run of [warmup, measured]) {
    ledger.acknowledged += run.ok;
    ledger.serviceErrors += run.errors;
    ledger.inFlightAtStop += CONFIG.connections;
  }
  return { ...measured, errors: measured.errors + warmup.errors, vacuumed };
}

/**
 * Scenario 9: capture (scenario 1's load and method) before, while and after the worker deletes
 * `CONFIG.retentionEvents` expired events with their deliveries: an endpoint holding them (30 days of them,
 * the newest 2 days old) gets `retention_days: 1`, and the next retention pass (RETENTION_INTERVAL_MS, 1 s
 * here) deletes them, a batch at a time. Its dead letters are kept. The endpoint is deleted after.
 */
async function scenarioRetention(context) {
  const { baseUrl, db, sink } = context;
  const token = await freshToken(context);
  const scenario = `9. retention: capture while the worker deletes ${count(CONFIG.retentionEvents)} events`;
  const { endpoint } = await api(baseUrl, 'POST', '/api/endpoints', { token, body: { name: 'retention' } });
  const { destination } = await api(baseUrl, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
    token,
    body: { url: `${sink.url}/retention` },
  });
  log(`scenario 9: seeding ${count(CONFIG.retentionEvents)} events with one delivery and attempt each`);
  const seeded = await seedRetention(db, endpoint.id, destination);
  const {
    rows: [expected],
  } = await db.query(
    `select count(*) filter (where status <> 'dead_letter')::int as expired,
            count(*) filter (where status = 'dead_letter')::int as kept
     from events where endpoint_id = $1`,
    [endpoint.id],
  );
  notes.push(
    `Scenario 9 seeding: ${count(CONFIG.retentionEvents)} events as in scenario 3, received over 30 days ending ` +
      `2 days ago, each with a delivered delivery and its attempt, in ${seeded.seconds.toFixed(0)} s.`,
  );

  log('scenario 9: capture, no deletion');
  const before = await measuredCapture(context);
  await waitForDrain(db, 'scenario 9, before the deletion');

  log('scenario 9: retention_days 1 on the endpoint; capture while the worker deletes');
  const deletedAtStart = await retentionDeleted(baseUrl);
  const shortenedAt = Date.now();
  await api(baseUrl, 'PATCH', `/api/endpoints/${endpoint.id}`, {
    token: await freshToken(context),
    body: { retention_days: 1 },
  });
  const startedBy = Date.now() + 30_000;
  while ((await retentionDeleted(baseUrl)) === deletedAtStart && Date.now() < startedBy) await sleep(100);
  const deletedBeforeLoad = await retentionDeleted(baseUrl);
  const during = await measuredCapture(context);
  const deletedDuringLoad = (await retentionDeleted(baseUrl)) - deletedBeforeLoad;
  await waitForDrain(db, 'scenario 9, during the deletion');

  log('scenario 9: waiting for the deletion to finish');
  // Watched on the service's counter: counting the endpoint's events meanwhile would take the CPU it measures.
  const drainBy = Date.now() + RETENTION_DRAIN_MS;
  while ((await retentionDeleted(baseUrl)) - deletedAtStart < expected.expired && Date.now() < drainBy)
    await sleep(500);
  const deletionSeconds = (Date.now() - shortenedAt) / 1000;
  const {
    rows: [left],
  } = await db.query(
    `select count(*) filter (where status <> 'dead_letter')::int as expired,
            count(*) filter (where status = 'dead_letter')::int as kept,
            (select count(*)::int from deliveries where destination_id = $2) as deliveries
     from events where endpoint_id = $1`,
    [endpoint.id, destination.id],
  );

  log('scenario 9: capture after the deletion');
  const after = await measuredCapture(context);
  await waitForDrain(db, 'scenario 9, after the deletion');
  await api(baseUrl, 'DELETE', `/api/endpoints/${endpoint.id}`, { token: await freshToken(context) });

  const latency = (run) => `${ms(run.p50)} / ${ms(run.p99)}`;
  addRow(scenario, 'capture p50 / p99 before the deletion', latency(before));
  addRow(
    scenario,
    `capture p50 / p99 while deleting (${count(deletedDuringLoad)} events deleted in the ${CONFIG.captureSeconds} s)`,
    latency(during),
  );
  addRow(scenario, 'capture p50 / p99 after the deletion', latency(after));
  addRow(
    scenario,
    'capture p99 while deleting / before',
    `${(during.p99 / before.p99).toFixed(2)}×`,
    '≤ 1.25×',
    during.p99 <= 1.25 * before.p99 && deletedDuringLoad > 0,
  );
  addRow(
    scenario,
    'captures/s before / while deleting / after',
    `${rate(before.perSecond)} / ${rate(during.perSecond)} / ${rate(after.perSecond)}`,
  );
  addRow(
    scenario,
    'CPU per capture, Node + PostgreSQL (the deletion’s backend included), before / while deleting',
    `${Math.round(before.processUs)} + ${Math.round(before.databaseUs)} µs / ` +
      `${Math.round(during.processUs)} + ${Math.round(during.databaseUs)} µs`,
  );
  const vacuums = { before, 'while deleting': during, after };
  notes.push(
    'Scenario 9, tables being vacuumed at the start or the end of each capture measure: ' +
      Object.entries(vacuums)
        .map(([label, run]) => `${label}: ${run.vacuumed.length ? run.vacuumed.join(', ') : 'none'}`)
        .join('; ') +
      '.',
  );
  addRow(
    scenario,
    'deleted: events with their deliveries, from retention_days to the last, rate (under the capture load)',
    `${count(expected.expired - left.expired)} in ${deletionSeconds.toFixed(0)} s, ` +
      `${rate((expected.expired - left.expired) / deletionSeconds)} ` +
      `(${rate(deletedDuringLoad / during.durationS)})`,
  );
  addRow(
    scenario,
    'left: expired events / dead letters kept / deliveries',
    `${count(left.expired)} / ${count(left.kept)} of ${count(expected.kept)} / ${count(left.deliveries)}`,
    '0 / all / one per dead letter',
    left.expired === 0 && left.kept === expected.kept && left.deliveries === expected.kept,
  );
  addRow(
    scenario,
    'errors (non-2xx, socket errors, time-outs; warm-ups included) before / while deleting / after',
    `${before.errors} / ${during.errors} / ${after.errors}`,
    '0',
    before.errors + during.errors + after.errors === 0,
  );
}

async function recordLedger(context) {
  const { db, sink, captureEndpoint } = context;
  const { rows: events } = await db.query(
    `select status, count(*)::int as n from events where endpoint_id = $1 group by status`,
    [captureEndpoint.id],
  );
  const byStatus = Object.fromEntries(events.map((row) => [row.status, row.n]));
  const stored = events.reduce((sum, row) => sum + row.n, 0);
  const delivered = byStatus.delivered ?? 0;
  const pending = (byStatus.received ?? 0) + (byStatus.failed ?? 0);
  const dead = byStatus.dead_letter ?? 0;
  const deliveries = await openDeliveries(db);
  const stats = await sink.stats();
  const balanced = stored === delivered + pending + dead;
  const noneLost =
    stored >= ledger.acknowledged &&
    stored - ledger.acknowledged <= ledger.inFlightAtStop &&
    stats.unique === deliveries.delivered;
  addRow(
    'ledger (all scenarios)',
    'captured (events in PostgreSQL) = delivered + pending + dead',
    `${count(stored)} = ${count(delivered)} + ${count(pending)} + ${count(dead)}`,
    'balanced',
    balanced,
  );
  addRow(
    'ledger (all scenarios)',
    'acknowledged 2xx / delivered rows / sink: unique deliveries, repeats',
    `${count(ledger.acknowledged)} / ${count(deliveries.delivered)} / ${count(stats.unique)}, ${count(stats.duplicates)}`,
    '2xx ≤ stored; sink = delivered',
    noneLost,
  );
  addRow(
    'ledger (all scenarios)',
    'errors (non-2xx, socket errors, time-outs, lost deliveries)',
    count(ledger.serviceErrors),
    '0',
    ledger.serviceErrors === 0,
  );
  if (stored > ledger.acknowledged) {
    notes.push(
      `Ledger: ${stored - ledger.acknowledged} events were stored whose 2xx the load generator did not read: ` +
        `requests in flight when a timed autocannon run stopped (at most ${ledger.inFlightAtStop}).`,
    );
  }
}

// ------------------------------------------------------------------------------------------------- main

async function main() {
  mkdirSync(RESULTS, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'hooktrail-bench-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  const certificate = makeCertificate(tmp);
  const postgresVersion = (await adminQuery('show server_version')).rows[0].server_version;
  const { autovacuum } = (await adminQuery('show autovacuum')).rows[0];
  if (autovacuum !== 'on')
    notes.push(
      "PostgreSQL's autovacuum is off on this server: the service's tables keep every dead row version and " +
        'get no fresh statistics during the run, which slows the scenarios after the first (the drain after ' +
        'scenario 1 by a quarter or more on the project machine; BENCHMARKS.md, 2026-11-29, session 26).',
    );

  const redis = new Redis(CONFIG.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  await redis.connect();
  const baselineKeyExisted = (await redis.exists(BASELINE_QUEUE_KEY)) === 1;
  cleanups.push(async () => {
    let cursor = '0';
    let rounds = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${names.redisPrefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
      rounds += 1;
    } while (cursor !== '0' && rounds < 100_000);
    if (!baselineKeyExisted) await redis.del(BASELINE_QUEUE_KEY);
    redis.disconnect();
  });

  const sink = await startSink(certificate.cert, certificate.key);
  cleanups.push(() => sink.close());

  await adminQuery(`create database "${names.baselineDb}"`);
  cleanups.push(() => adminQuery(`drop database if exists "${names.baselineDb}" with (force)`));
  cleanups.push(() =>
    CONFIG.keepDatabase
      ? log(`kept the service's database ${names.serviceDb}`)
      : adminQuery(`drop database if exists "${names.serviceDb}" with (force)`),
  );

  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const profileDir = join(RESULTS, 'profiles');
  const nodeArgs = CONFIG.cpuProfile
    ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '-r', join(__dirname, 'lib', 'exit-on-term.js')]
    : [];
  const serviceEnv = {
    NODE_ENV: 'production',
    APP_ROLE: CONFIG.appRole,
    PORT: String(port),
    DATABASE_URL: `${CONFIG.postgresUrl}/${names.serviceDb}`,
    REDIS_URL: CONFIG.redisUrl,
    REDIS_PREFIX: names.redisPrefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
    NODE_EXTRA_CA_CERTS: certificate.caFile,
    SITE_URL: baseUrl,
    AUTH_RATE_LIMIT_PER_MIN: '1000',
    // Scenarios 3 and 8 seed events up to 90 days old for the bench user (on the free plan): every plan
    // keeps them. Scenario 9 shortens its own endpoint's retention; a pass every second starts it at once.
    RETENTION_DAYS: 'free:3650,starter:3650,pro:3650,team:3650',
    RETENTION_INTERVAL_MS: '1000',
    ...(env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: env.BENCH_NODE_OPTIONS } : {}),
    ...(env.BENCH_SERVICE_ENTRY ? { HOOKTRAIL_ENTRY: resolve(ROOT, env.BENCH_SERVICE_ENTRY) } : {}),
  };
  // As `npm start` and the Docker image run it: through the launcher, with its process settings.
  const launcher = join(ROOT, 'bin', 'hooktrail-server');
  log(`starting the service (${launcher}) on ${baseUrl}, database ${names.serviceDb}`);
  const serviceProcess = startNode('service', [launcher, ...nodeArgs], serviceEnv, {
    cwd: tmp,
    command: 'sh',
    logFile: env.BENCH_SERVICE_LOG || undefined,
  });
  cleanups.push(() => stopProcess(serviceProcess));
  await waitForHttp(serviceProcess, `${baseUrl}/health/ready`, 90_000);

  const basePort = await freePort();
  const baselineProcess = startNode('reference', [BASELINE], {
    NODE_PATH: join(ROOT, 'node_modules'),
    PORT: String(basePort),
    DATABASE_URL: `${CONFIG.postgresUrl}/${names.baselineDb}`,
    REDIS_URL: CONFIG.redisUrl,
  });
  cleanups.push(() => stopProcess(baselineProcess));
  const floorPort = await freePort();
  const floorProcess = startNode('floor', [join(__dirname, 'floor-capture.js')], {
    NODE_PATH: join(ROOT, 'node_modules'),
    PORT: String(floorPort),
    DATABASE_URL: `${CONFIG.postgresUrl}/${names.baselineDb}`,
    REDIS_URL: CONFIG.redisUrl,
    QUEUE_KEY: `${names.redisPrefix}:floor`,
    STRIPE_SECRET: RULES_SECRET,
  });
  cleanups.push(() => stopProcess(floorProcess));

  const credentials = { email: `bench-${runId}@example.com`, password: randomBytes(12).toString('hex') };
  const session = await api(baseUrl, 'POST', '/api/auth/register', {
    body: { ...credentials, name: 'Bench' },
  });
  const token = session.accessToken;
  const { endpoint: captureEndpoint } = await api(baseUrl, 'POST', '/api/endpoints', {
    token,
    body: { name: 'capture' },
  });
  const { destination } = await api(baseUrl, 'POST', `/api/endpoints/${captureEndpoint.id}/destinations`, {
    token,
    body: { url: sink.url, secret: 'whsec_bench_secret' },
  });
  const { endpoint: readsEndpoint } = await api(baseUrl, 'POST', '/api/endpoints', {
    token,
    body: { name: 'reads' },
  });

  const db = new Pool({ connectionString: serviceEnv.DATABASE_URL, max: 3 });
  cleanups.push(() => db.end());
  const queue = new Queue('delivery', CONFIG.redisUrl, { prefix: `${names.redisPrefix}:bull` });
  cleanups.push(() => queue.close());

  // Diagnosis only: SQL run on the service's database before the scenarios (e.g. to try an index).
  if (env.BENCH_SETUP_SQL) await db.query(env.BENCH_SETUP_SQL);

  const context = {
    service: serviceProcess,
    baseline: { process: baselineProcess },
    floor: { process: floorProcess },
    baseUrl,
    captureUrl: `${baseUrl}/in/${captureEndpoint.public_token}`,
    baselineUrl: `http://127.0.0.1:${basePort}/in/${captureEndpoint.public_token}`,
    floorUrl: `http://127.0.0.1:${floorPort}/in/${captureEndpoint.public_token}`,
    floorRulesUrl: `http://127.0.0.1:${floorPort}/rules/${captureEndpoint.public_token}`,
    captureEndpoint,
    destinationPath: `/api/endpoints/${captureEndpoint.id}/destinations/${destination.id}`,
    token,
    readsEndpoint,
    credentials,
    sink,
    db,
    queue,
    redis,
  };
  if (CONFIG.scenarios.has('capture') || CONFIG.scenarios.has('rules')) {
    await waitForHttp(baselineProcess, `http://127.0.0.1:${basePort}/in/warmup`, 30_000).catch(
      () => undefined,
    );
    await waitForHttp(floorProcess, `${context.floorUrl}?ready`, 30_000);
  }
  if (CONFIG.scenarios.has('capture')) await scenarioCapture(context);
  // Scenarios 1 and 7 measure Hooktrail against both, in turns; no other scenario needs them.
  if (CONFIG.scenarios.has('rules')) await scenarioRules(context);
  await Promise.all([stopProcess(baselineProcess), stopProcess(floorProcess)]);
  if (CONFIG.scenarios.has('delivery')) await scenarioDelivery(context);
  if (CONFIG.scenarios.has('flow')) {
    await scenarioRateLimit(context);
    await scenarioFairShare(context);
  }
  let seeded = null;
  const reads = CONFIG.scenarios.has('reads');
  if (CONFIG.scenarios.has('soak')) {
    const seedMeanwhile =
      reads && CONFIG.seedDuringSoak ? () => seedEvents(db, readsEndpoint.id, { concurrently: true }) : null;
    seeded = await scenarioSoak(context, seedMeanwhile);
  }
  if (reads) await scenarioReads(context, seeded);
  if (CONFIG.scenarios.has('stats')) await scenarioStats(context);
  if (CONFIG.scenarios.has('retention')) await scenarioRetention(context);
  if (
    ['capture', 'rules', 'delivery', 'flow', 'soak', 'retention'].some((name) => CONFIG.scenarios.has(name))
  ) {
    await recordLedger(context);
  }

  const info = machine(`${postgresVersion} (autovacuum ${autovacuum})`);
  const output = [
    `## Hooktrail benchmark, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `Machine: ${info.cpus}, ${info.memory} RAM, ${info.os}; Node ${info.node}; PostgreSQL ${info.postgres}. ` +
      `Service: production build, APP_ROLE=${serviceEnv.APP_ROLE}, one process. Run time ${((Date.now() - started) / 60_000).toFixed(1)} min.`,
    '',
    table(rows),
    '',
    ...notes.map((note) => `- ${note}`),
    '',
  ].join('\n');
  writeFileSync(join(RESULTS, 'latest.md'), output);
  writeFileSync(join(RESULTS, 'service-output.log'), serviceProcess.output());
  return output;
}

let finishing = false;
async function finish(code, message) {
  if (finishing) return;
  finishing = true;
  if (message) console.log(message);
  log('cleaning up (processes, databases, Redis keys)');
  await runCleanups(cleanups);
  process.exit(code);
}

if (!existsSync(join(ROOT, 'dist', 'src', 'main.js'))) {
  console.error('dist/src/main.js is missing: run `npm run build` (npm run bench does it for you)');
  process.exit(1);
}
if (!existsSync(BASELINE)) {
  console.error(`the reference server is missing: ${BASELINE}`);
  process.exit(1);
}
process.on('SIGINT', () => void finish(130, 'interrupted'));
process.on('SIGTERM', () => void finish(143, 'terminated'));
setTimeout(
  () => void finish(1, `the benchmark ran past ${CONFIG.deadlineMs / 60_000} minutes: stopped`),
  CONFIG.deadlineMs,
).unref();

main().then(
  (output) => finish(0, `\n${output}\n(also written to bench/results/latest.md)`),
  (error) => {
    console.error(error);
    void finish(1);
  },
);
