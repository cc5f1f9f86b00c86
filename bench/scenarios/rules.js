// Scenario 7, ingest rules: scenario 1's load, Stripe-signed, on an endpoint with Stripe verification,
// dedup on Stripe's event id and two filtered destinations, against the reference and the floor's /rules
// in turns; and what the service stored of it. RULES_SECRET is the floor's secret too (bench/run.js).
const { randomBytes } = require('node:crypto');
const { CONFIG, log } = require('../lib/config');
const { addRow } = require('../lib/results');
const { signedLoad } = require('../lib/load');
const { api } = require('../lib/setup');
const { waitForDrain } = require('../lib/deliveries');
const { ROUNDS, captureTurns, addTargetRows } = require('../lib/turns');
const { ms, count } = require('../lib/report');

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
  const runs = await captureTurns(
    'Scenario 7',
    context,
    { url, floorUrl: context.floorRulesUrl },
    rulesLoad(),
    signedLoad,
  );
  const [measured, reference, floor] = runs;
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
  addTargetRows(scenario, runs, {
    reference: `reference requests/s under the same signed load (same run, ${ROUNDS} turns each)`,
    latency: 'latency p50 / p99',
    floor:
      "floor with the rules' work (bench/floor-capture.js /rules: the Stripe HMAC, the body parsed, the two filters, the dedup claims in Redis, one call a batch), requests/s, ratio to the reference",
  });
  addRow(
    scenario,
    "floor with the rules' work: latency p50 / p99; CPU per capture, Node + PostgreSQL; duplicates answered; errors",
    `${ms(floor.p50)} / ${ms(floor.p99)}; ${Math.round(floor.processUs)} + ${Math.round(floor.databaseUs)} µs; ` +
      `${count(floor.duplicates)}; ${floor.errors}`,
  );
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

module.exports = { scenarioRules, RULES_SECRET };
