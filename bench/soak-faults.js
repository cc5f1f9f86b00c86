#!/usr/bin/env node
// `npm run soak:faults`: the chaos run of issue 71. Self-contained: a PostgreSQL cluster and a Redis of its
// own (bench/lib/throwaway.js; the shared ones are never touched), one API process and two worker processes
// of the production build, an HTTPS sink (bench/lib/sink.js), and captures at a steady rate the whole time
// from a load generator in a process of its own (test/support/load-generator.js, the fault tests' provider).
// At random moments one fault at a time: Redis killed and started again empty, PostgreSQL crashed
// (`pg_ctl stop -m immediate`) and started again, or a worker SIGKILLed and another started. After the
// load, the backlog settles; then the ledger of the acknowledged captures, read from PostgreSQL: every one
// stored, and every stored one delivered, dead-lettered or still owed an attempt. It exits 1 when one is
// lost. The report is printed and written to bench/results/soak-faults.md.
//
// Flags: --minutes N (10; of load), --rate N (captures a second, 100), --seed N (the faults' moments).
const { fork } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { Pool } = require('pg');
const { ROOT, startNode, waitForHttp, stopProcess, startSink } = require('./lib/processes');
const { api, makeCertificate, freePort, runCleanups } = require('./lib/setup');
const { throwawayRedis, throwawayPostgres } = require('./lib/throwaway');
const { percentile, ms, count } = require('./lib/report');

function flag(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} takes a positive number`);
    process.exit(2);
  }
  return value;
}

const CONFIG = {
  minutes: flag('minutes', 10),
  ratePerS: flag('rate', 100),
  seed: flag('seed', Date.now() % 1_000_000),
  /** A fault comes 15 to 45 s after the previous one ended; none starts in the load's last 30 s. */
  gapMs: [15_000, 45_000],
  quietEndMs: 30_000,
  /** How long Redis or PostgreSQL stays down. */
  outageMs: [2_000, 10_000],
  /** A capture gets this long to answer before it counts as unanswered. */
  requestTimeoutMs: 15_000,
  /** The backlog settles when nothing is owed for 5 s, or after this. */
  settleLimitMs: 5 * 60_000,
  // The sink answers every request 200: an attempt fails only because of a fault. Short retry delays
  // let what a fault failed be retried within a minute of the load's end, not the default 10 minutes.
  retryDelaysMs: '1000,5000,15000,30000',
};
const RESULTS = join(__dirname, 'results');
const LOAD_GENERATOR = join(ROOT, 'test', 'support', 'load-generator.js');
const LAUNCHER = join(ROOT, 'bin', 'hooktrail-server');

/** Mulberry32: the faults' moments and kinds, repeatable with --seed. */
function randomFrom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = randomFrom(CONFIG.seed);
const between = ([low, high]) => low + Math.round(random() * (high - low));

const started = Date.now();
const log = (message) =>
  console.log(`[soak ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);
/** Everything to undo at the end, newest first. */
const cleanups = [];

/** One process of the build (APP_ROLE api or worker), started as `npm start` starts it, up once /health answers. */
async function startService(label, env, tmp) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const service = startNode(
    label,
    [LAUNCHER],
    { ...env, PORT: String(port), SITE_URL: url },
    { cwd: tmp, command: 'sh' },
  );
  cleanups.push(() => stopProcess(service));
  await waitForHttp(service, `${url}/health`, 90_000);
  return { ...service, url };
}

/** The load generator's captures at CONFIG.ratePerS for CONFIG.minutes: {results: Promise<CaptureResult[]>}. */
function startLoad(captureUrl) {
  const child = fork(LOAD_GENERATOR, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanups.push(async () => child.exitCode === null && child.kill('SIGKILL'));
  const results = new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message.results));
    child.once('exit', (code, signal) => reject(new Error(`the load generator exited (${code ?? signal})`)));
  });
  child.send({
    url: captureUrl,
    ratePerS: CONFIG.ratePerS,
    total: Math.round(CONFIG.ratePerS * CONFIG.minutes * 60),
    timeoutMs: CONFIG.requestTimeoutMs,
    bodyTemplate: '{"type":"soak.fault","n":%n}',
  });
  return results;
}

/**
 * Faults one after the other until `untilMs` (a Date.now()): each kind in turn from a shuffled round of
 * the three, so that each happens about as often. Returns [{kind, at, backAt}], times in Date.now().
 */
async function injectFaults({ redis, postgres, workers, startWorker }, untilMs) {
  const faults = [];
  let round = [];
  const shuffled = () => {
    const kinds = ['redis', 'postgres', 'worker'];
    for (let i = kinds.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
    }
    return kinds;
  };
  for (;;) {
    const gap = between(CONFIG.gapMs);
    if (Date.now() + gap > untilMs) break;
    await sleep(gap);
    if (round.length === 0) round = shuffled();
    const kind = round.pop();
    const at = Date.now();
    if (kind === 'redis') {
      await redis.stop();
      await sleep(between(CONFIG.outageMs));
      await redis.start();
    } else if (kind === 'postgres') {
      await postgres.stop('immediate');
      await sleep(between(CONFIG.outageMs));
      await postgres.start();
    } else {
      const victim = workers.splice(Math.floor(random() * workers.length), 1)[0];
      victim.child.kill('SIGKILL');
      await victim.exited;
      workers.push(await startWorker());
    }
    faults.push({ kind, at, backAt: Date.now() });
    log(
      `${kind} ${kind === 'worker' ? 'SIGKILLed, another up' : 'down and up again'} in ${Date.now() - at} ms`,
    );
  }
  return faults;
}

/** Deliveries owed an attempt, and events not yet routed. */
async function owed(db) {
  const { rows } = await db.query(
    `select (select count(*) from deliveries where status in ('pending', 'failed'))::int
          + (select count(*) from routing_queue)::int as owed`,
  );
  return rows[0].owed;
}

/** Waits until nothing is owed for 5 s in a row (or CONFIG.settleLimitMs); returns how long it took. */
async function settle(db) {
  const begin = Date.now();
  let calmSince = null;
  while (Date.now() - begin < CONFIG.settleLimitMs) {
    const now = Date.now();
    if ((await owed(db)) > 0) calmSince = null;
    else if ((calmSince ??= now) <= now - 5000) break;
    await sleep(500);
  }
  return Date.now() - begin;
}

/**
 * The books of the acknowledged ids (as test/reliability/support/ledger.ts reads them): stored, and of
 * those delivered, dead-lettered, still owed an attempt, or none of these (lost).
 */
async function ledger(db, acknowledged) {
  const ids = [...new Set(acknowledged)];
  const { rows } = await db.query(
    `select e.id, e.status,
            exists (select 1 from deliveries d where d.event_id = e.id and d.status in ('pending', 'failed'))
              or exists (select 1 from routing_queue q where q.event_id = e.id) as open
       from events e where e.id = any($1::uuid[])`,
    [ids],
  );
  const books = { acknowledged: ids.length, stored: rows.length, delivered: 0, deadLetter: 0, pending: 0 };
  const found = new Set(rows.map((row) => row.id));
  books.notStored = ids.filter((id) => !found.has(id));
  books.unaccounted = [];
  for (const row of rows) {
    if (row.status === 'delivered') books.delivered += 1;
    else if (row.status === 'dead_letter') books.deadLetter += 1;
    else if (row.open) books.pending += 1;
    else books.unaccounted.push(row.id);
  }
  const {
    rows: [{ total }],
  } = await db.query('select count(*)::int as total from events');
  books.storedUnacknowledged = total - rows.length;
  return books;
}

/** Status counts and answer times of `sent`. */
function answers(sent) {
  const statuses = {};
  for (const result of sent) {
    const key = result.status === 0 ? 'unanswered' : String(result.status);
    statuses[key] = (statuses[key] ?? 0) + 1;
  }
  const durations = sent.map((result) => result.durationMs);
  return {
    sent: sent.length,
    statuses,
    p50: percentile(durations, 50),
    p99: percentile(durations, 99),
    max: durations.length === 0 ? NaN : Math.max(...durations),
  };
}

const statusText = (statuses) =>
  Object.entries(statuses)
    .map(([status, n]) => `${status}: ${count(n)}`)
    .join(', ');

/** Whether a capture was sent during one of `faults`: from its start to 5 s after all was back. */
const sentDuring = (faults) => (result) =>
  faults.some((fault) => result.sentAt >= fault.at && result.sentAt < fault.backAt + 5_000);

function report({ results, faults, books, sinkStats, settleMs, loadStart, loadMs }) {
  const acknowledged = results.filter((result) => result.status === 200).length;
  const lost = books.notStored.length + books.unaccounted.length;
  const inAnyFault = sentDuring(faults);
  const calm = answers(results.filter((result) => !inAnyFault(result)));
  const lines = [
    `## Fault soak, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `\`npm run soak:faults -- --minutes ${CONFIG.minutes} --rate ${CONFIG.ratePerS} --seed ${CONFIG.seed}\`: ` +
      `${(loadMs / 1000).toFixed(0)} s of captures at ${CONFIG.ratePerS}/s, one API and two worker processes, ` +
      `backlog settled in ${(settleMs / 1000).toFixed(0)} s after the load.`,
    '',
    '| ledger | count |',
    '|---|---|',
    `| sent | ${count(results.length)} |`,
    `| acknowledged (200) | ${count(acknowledged)} |`,
    `| stored (event rows of the acknowledged ids) | ${count(books.stored)} |`,
    `| delivered | ${count(books.delivered)} |`,
    `| dead-lettered | ${count(books.deadLetter)} |`,
    `| pending (still owed an attempt) | ${count(books.pending)} |`,
    `| lost (acknowledged, not stored: ${books.notStored.length}; stored, not accounted for: ${books.unaccounted.length}) | ${count(lost)} |`,
    `| duplicates delivered (a delivery id the sink saw again) | ${count(sinkStats.duplicates)} |`,
    `| stored without a 200 (answered otherwise, or not in time) | ${count(books.storedUnacknowledged)} |`,
    '',
    `Answers: ${statusText(answers(results).statuses)}. Away from the faults: ${count(calm.sent)} sent, ` +
      `p50 ${ms(calm.p50)}, p99 ${ms(calm.p99)}, max ${ms(calm.max)}.`,
    '',
    '| fault | count | captures sent during it (to 5 s after) | their answers | p99 | max |',
    '|---|---|---|---|---|---|',
  ];
  for (const kind of ['redis', 'postgres', 'worker']) {
    const ofKind = faults.filter((fault) => fault.kind === kind);
    const during = answers(results.filter(sentDuring(ofKind)));
    const label = {
      redis: 'Redis killed, started again empty',
      postgres: 'PostgreSQL crashed (immediate), started again',
      worker: 'a worker SIGKILLed, another started',
    }[kind];
    lines.push(
      `| ${label} | ${ofKind.length} | ${count(during.sent)} | ${statusText(during.statuses)} | ${ms(during.p99)} | ${ms(during.max)} |`,
    );
  }
  lines.push(
    '',
    `Faults (s after the load began, down for): ${faults
      .map(
        (fault) =>
          `${fault.kind} ${((fault.at - loadStart) / 1000).toFixed(0)} s (${((fault.backAt - fault.at) / 1000).toFixed(1)} s)`,
      )
      .join('; ')}.`,
  );
  if (lost > 0)
    lines.push(
      '',
      `**Lost**: not stored ${books.notStored.slice(0, 10).join(', ')}; unaccounted ${books.unaccounted.slice(0, 10).join(', ')}`,
    );
  return { text: lines.join('\n'), lost };
}

async function main() {
  mkdirSync(RESULTS, { recursive: true });
  const tmp = mkdtempSync(join(tmpdir(), 'hooktrail-soak-'));
  cleanups.push(async () => rmSync(tmp, { recursive: true, force: true }));
  const certificate = makeCertificate(tmp);
  log(`seed ${CONFIG.seed}; starting a PostgreSQL and a Redis of its own`);
  const [postgres, redis] = await Promise.all([
    freePort().then(throwawayPostgres),
    freePort().then(throwawayRedis),
  ]);
  cleanups.push(() => postgres.destroy());
  await postgres.start();
  cleanups.push(() => redis.stop());
  await redis.start();
  const sink = await startSink(certificate.cert, certificate.key);
  cleanups.push(() => sink.close());

  const env = {
    NODE_ENV: 'production',
    DATABASE_URL: postgres.url('hooktrail_soak'),
    REDIS_URL: redis.url,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    DELIVERY_RETRY_DELAYS_MS: CONFIG.retryDelaysMs,
    LOG_LEVEL: 'warn',
    NODE_EXTRA_CA_CERTS: certificate.caFile,
  };
  const apiProcess = await startService('api', { ...env, APP_ROLE: 'api' }, tmp);
  let workerNumber = 0;
  const startWorker = () =>
    startService(`worker ${(workerNumber += 1)}`, { ...env, APP_ROLE: 'worker' }, tmp);
  const workers = await Promise.all([startWorker(), startWorker()]);
  log(`API on ${apiProcess.url}, two workers up`);

  const credentials = {
    email: `soak-${randomBytes(4).toString('hex')}@example.com`,
    password: randomBytes(12).toString('hex'),
  };
  const { accessToken: token } = await api(apiProcess.url, 'POST', '/api/auth/register', {
    body: { ...credentials, name: 'Soak' },
  });
  const { endpoint } = await api(apiProcess.url, 'POST', '/api/endpoints', { token, body: { name: 'soak' } });
  await api(apiProcess.url, 'POST', `/api/endpoints/${endpoint.id}/destinations`, {
    token,
    body: { url: sink.url, secret: 'whsec_soak_secret' },
  });
  const db = new Pool({ connectionString: env.DATABASE_URL, max: 2 });
  db.on('error', () => undefined); // its idle connections die with each PostgreSQL crash
  cleanups.push(() => db.end());

  const loadStart = Date.now();
  log(`captures at ${CONFIG.ratePerS}/s for ${CONFIG.minutes} min`);
  const results = startLoad(`${apiProcess.url}/in/${endpoint.public_token}`);
  const faults = await injectFaults(
    { redis, postgres, workers, startWorker },
    loadStart + CONFIG.minutes * 60_000 - CONFIG.quietEndMs,
  );
  const answered = await results;
  const loadMs = Date.now() - loadStart;
  log(`load done (${count(answered.length)} sent); letting the backlog settle`);
  const settleMs = await settle(db);
  await sleep(1000); // a late duplicate would show up now
  const acknowledged = answered.flatMap((result) => (result.status === 200 && result.id ? [result.id] : []));
  const books = await ledger(db, acknowledged);
  const sinkStats = await sink.stats();
  const { text, lost } = report({ results: answered, faults, books, sinkStats, settleMs, loadStart, loadMs });
  writeFileSync(join(RESULTS, 'soak-faults.md'), `${text}\n`);
  return { text, lost };
}

let finishing = false;
async function finish(code, message) {
  if (finishing) return;
  finishing = true;
  if (message) console.log(message);
  log('cleaning up (processes, the throwaway PostgreSQL and Redis)');
  await runCleanups(cleanups);
  process.exit(code);
}

if (!existsSync(join(ROOT, 'dist', 'src', 'main.js'))) {
  console.error('dist/src/main.js is missing: run `npm run build` (npm run soak:faults does it for you)');
  process.exit(1);
}
process.on('SIGINT', () => void finish(130, 'interrupted'));
process.on('SIGTERM', () => void finish(143, 'terminated'));

main().then(
  ({ text, lost }) => finish(lost > 0 ? 1 : 0, `\n${text}\n\n(also written to bench/results/soak-faults.md)`),
  (error) => {
    console.error(error);
    void finish(1);
  },
);
