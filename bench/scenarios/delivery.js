// Scenario 2, delivery to the HTTPS sink: a drain of CONFIG.drainEvents captures queued while the delivery
// queue is paused (deliveries/s, CPU and Redis commands per delivery), then a steady CONFIG.steadyRate
// captures/s paced by an open-loop sender: capture → first attempt at the sink.
const { setTimeout: sleep } = require('node:timers/promises');
const { CONFIG, names, log } = require('../lib/config');
const { addRow, notes, ledger } = require('../lib/results');
const { constantLoad, now } = require('../lib/load');
const { cpuMeter, backendsOf } = require('../lib/processes');
const { waitForDrain, steadyArrivals } = require('../lib/deliveries');
const { capturePayloads, PAYLOADS } = require('../lib/payloads');
const { percentile, ms, count, rate } = require('../lib/report');

/** Commands the Redis server ran so far (INFO commandstats; a script's own calls counted as well). */
async function redisCommands(redis) {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const match of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
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

module.exports = { scenarioDelivery };
