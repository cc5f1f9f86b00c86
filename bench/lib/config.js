// The settings of one run of bench/run.js and what names it, in one module so that run.js and every
// scenario read the same: CONFIG, from the environment (the BENCH_* variables run.js's header lists), the
// names of the databases and the Redis key prefix the run makes, its start, and its log.
const { randomBytes } = require('node:crypto');

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
/** How long one case of the timed reads (scenarios 3 and 8, lib/timed-gets.js) may take. */
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

module.exports = { CONFIG, READ_CASE_BUDGET_MS, runId, names, started, log };
