/* global AbortSignal */
// Scenario 9, retention (runs only when BENCH_SCENARIOS names it): capture before, while and after the
// service's retention deletes CONFIG.retentionEvents expired events (BENCH_RETENTION_EVENTS) with their
// deliveries, and what is left after.
const { setTimeout: sleep } = require('node:timers/promises');
const { CONFIG, names, log } = require('../lib/config');
const { addRow, notes, ledger } = require('../lib/results');
const { webhookBody, constantLoad, meteredLoad } = require('../lib/load');
const { backendsOf } = require('../lib/processes');
const { api, freshToken } = require('../lib/setup');
const { seedEvents, recordSeededAttempts, STATS_SEED_CHUNK } = require('../lib/seed');
const { waitForDrain } = require('../lib/deliveries');
const { ms, count, rate } = require('../lib/report');

/** Scenario 9's events: received over 30 days, ending 2 days ago, past its endpoint's retention of 1 day. */
const RETENTION_SPAN = { days: 30, olderThanDays: 2 };
/** How long scenario 9 waits for the deletion to finish once its measures are done. */
const RETENTION_DRAIN_MS = 10 * 60_000;

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

module.exports = { scenarioRetention };
