// The service's deliveries as the scenarios watch them: those still open, waiting until none is, and a
// steady marked load's capture → arrival at the sink.
const { setTimeout: sleep } = require('node:timers/promises');
const { CONFIG } = require('./config');
const { notes, ledger } = require('./results');
const { markedLoad } = require('./load');

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

module.exports = { openDeliveries, waitForDrain, steadyArrivals };
