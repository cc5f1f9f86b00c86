// Scenario 8, statistics: GET /api/endpoints/:id/stats at CONFIG.statsEvents events and as many attempts
// (BENCH_STATS_EVENTS) spread over 30 days, by window (lib/timed-gets.js); then what the statistics
// trigger adds to a capture batch.
const { CONFIG, log } = require('../lib/config');
const { addRow, notes } = require('../lib/results');
const { now } = require('../lib/load');
const { api, freshToken } = require('../lib/setup');
const { recordSeededAttempts, STATS_SEED_CHUNK } = require('../lib/seed');
const { timedGets } = require('../lib/timed-gets');
const { percentile, ms, count } = require('../lib/report');

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
    const { timings, body } = await timedGets(
      `${baseUrl}/api/endpoints/${endpoint.id}/stats?window=${window}`,
      token,
      CONFIG.statsRequests,
      `Scenario 8 ${window}`,
    );
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

module.exports = { scenarioStats };
