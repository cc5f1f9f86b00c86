// Scenario 5, flow control (BENCH_SCENARIOS' `flow`, with scenario 6): the capture endpoint's destination
// limited to CONFIG.rateLimit deliveries/s, and how evenly the sink sees them arrive.
const { setTimeout: sleep } = require('node:timers/promises');
const { CONFIG, log } = require('../lib/config');
const { addRow, notes, ledger } = require('../lib/results');
const { webhookBody, constantLoad } = require('../lib/load');
const { api } = require('../lib/setup');
const { waitForDrain } = require('../lib/deliveries');
const { count, rate } = require('../lib/report');

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

module.exports = { scenarioRateLimit };
