#!/usr/bin/env node
// `npm run bench`: the performance benchmark of Hooktrail (issue 7). Self-contained: it starts the
// production build (APP_ROLE=all, one process) with a database and Redis prefix of its own, an HTTPS sink
// and the reference server ../shared/bench/baseline-capture.js, runs the scenarios with autocannon (the
// steady 200/s with a paced sender, bench/lib/load.js), prints ONE table, writes it to
// bench/results/latest.md, and removes what it made (processes, databases, keys).
//
//
// This file is the entry point: it sets the run up, runs the scenarios in order and cleans up. Each
// scenario is a file of bench/scenarios/ (capture 1, delivery 2, reads 3, soak 4, rate-limit 5, fair-share 6,
// rules 7, stats 8, retention 9; ledger: the rows across them); what several share is in bench/lib/
// (CONFIG and the run's names in lib/config.js, the rows, notes and ledger in lib/results.js).
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
const { randomBytes } = require('node:crypto');
const { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const Queue = require('bull');
const Redis = require('ioredis');
const { Client, Pool } = require('pg');
const { CONFIG, runId, names, started, log } = require('./lib/config');
const { rows, notes } = require('./lib/results');
const { ROOT, startNode, waitForHttp, stopProcess, startSink } = require('./lib/processes');
const { api, makeCertificate, freePort, runCleanups } = require('./lib/setup');
const { seedEvents } = require('./lib/seed');
const { machine, table } = require('./lib/report');
const { scenarioCapture } = require('./scenarios/capture');
const { scenarioRules, RULES_SECRET } = require('./scenarios/rules');
const { scenarioDelivery } = require('./scenarios/delivery');
const { scenarioRateLimit } = require('./scenarios/rate-limit');
const { scenarioFairShare } = require('./scenarios/fair-share');
const { scenarioSoak } = require('./scenarios/soak');
const { scenarioReads } = require('./scenarios/reads');
const { scenarioStats } = require('./scenarios/stats');
const { scenarioRetention } = require('./scenarios/retention');
const { recordLedger } = require('./scenarios/ledger');

const { env } = process;
const BASELINE = env.BENCH_BASELINE
  ? resolve(env.BENCH_BASELINE)
  : join(ROOT, '..', 'shared', 'bench', 'baseline-capture.js');
const RESULTS = join(__dirname, 'results');
const BASELINE_QUEUE_KEY = 'baseline:queue';

/** Everything to undo at the end, newest first. */
const cleanups = [];

async function adminQuery(sql) {
  const client = new Client({ connectionString: `${CONFIG.postgresUrl}/postgres` });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
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
