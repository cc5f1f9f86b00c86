// Scenario 3, reads at CONFIG.readEvents events (BENCH_READ_EVENTS, seeded by lib/seed.js, during the soak
// unless BENCH_SEED_DURING_SOAK=0): the event list's p50 / p95 by case (pages, filters, search),
// CONFIG.readRequests requests each (lib/timed-gets.js).
const { createHash } = require('node:crypto');
const { CONFIG, READ_CASE_BUDGET_MS, log } = require('../lib/config');
const { addRow, notes } = require('../lib/results');
const { freshToken } = require('../lib/setup');
const { seedEvents, rareEvent, COMMON_WORD } = require('../lib/seed');
const { timedGets } = require('../lib/timed-gets');
const { percentile, ms, count } = require('../lib/report');

async function scenarioReads(context, seeded) {
  const { baseUrl, db, readsEndpoint } = context;
  const scenario = `3. reads at ${count(CONFIG.readEvents)} events`;
  if (!seeded) {
    log(`scenario 3: seeding ${count(CONFIG.readEvents)} events`);
    seeded = await seedEvents(db, readsEndpoint.id);
  }
  notes.push(
    `Scenario 3 seeding: ${count(CONFIG.readEvents)} events (Stripe invoice.paid / charge.succeeded, GitHub push, ` +
      `Shopify orders/create; about 1.1 KB each; 93 % delivered, 3 % failed, 2 % dead_letter, 2 % received; 90 days) ` +
      `by INSERT ... SELECT generate_series in ${seeded.inserted.toFixed(0)} s, GIN rebuild + VACUUM ANALYZE, ` +
      `${seeded.seconds.toFixed(0)} s in all.`,
  );
  const token = await freshToken(context);
  const rareCustomer = `cus_${createHash('md5').update('hooktrail-rare-customer').digest('hex').slice(0, 14)}`;
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const cases = [
    ['first page', ''],
    ['page 200', '?page=200'],
    ['status=failed', '?status=failed'],
    ['from (last 7 days)', `?from=${encodeURIComponent(weekAgo)}`],
    [`q, a rare id (1 event)`, `?q=${rareCustomer}`],
    [`q, a common word ("${COMMON_WORD}", 80 %)`, `?q=${COMMON_WORD}`],
  ];
  for (const [label, query] of cases) {
    log(`scenario 3: ${label}`);
    const path = `/api/endpoints/${readsEndpoint.id}/events${query}`;
    const { timings, body } = await timedGets(
      `${baseUrl}${path}`,
      token,
      CONFIG.readRequests,
      `Scenario 3 ${label}`,
    );
    const p50 = percentile(timings, 50);
    const p95 = percentile(timings, 95);
    const target = query.startsWith('?q=') ? 150 : 50;
    if (timings.length < CONFIG.readRequests) {
      notes.push(
        `Scenario 3 ${label}: only ${timings.length} of ${CONFIG.readRequests} requests fitted in ${READ_CASE_BUDGET_MS / 1000} s.`,
      );
    }
    addRow(
      scenario,
      `${label}: p50 / p95 (total ${count(body?.pagination?.total)})`,
      `${ms(p50)} / ${ms(p95)}`,
      `p95 ≤ ${target} ms`,
      p95 <= target,
    );
    if (query === `?q=${rareCustomer}` && body?.pagination?.total !== 1) {
      notes.push(
        `Scenario 3: the rare id matched ${body?.pagination?.total} events, expected 1 (event ${rareEvent(CONFIG.readEvents)}).`,
      );
    }
  }
}

module.exports = { scenarioReads };
