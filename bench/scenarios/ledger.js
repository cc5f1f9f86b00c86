// The ledger across all scenarios, the last rows of the table: the capture endpoint's events in PostgreSQL
// = delivered + pending + dead, the 2xx acknowledged (lib/results.js' ledger) all stored, and the sink's
// unique deliveries = the delivered rows.
const { addRow, notes, ledger } = require('../lib/results');
const { openDeliveries } = require('../lib/deliveries');
const { count } = require('../lib/report');

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

module.exports = { recordLedger };
