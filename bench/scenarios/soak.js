// Scenario 4, memory: a soak at CONFIG.soakRate requests/s for CONFIG.soakSeconds (BENCH_SOAK_SECONDS),
// the service's RSS after the first minute against at the end; scenario 3's seeding may run meanwhile
// (`seeding`, BENCH_SEED_DURING_SOAK). Scenario 1 adds the other memory row, its peak.
const { CONFIG, log } = require('../lib/config');
const { addRow, notes, ledger } = require('../lib/results');
const { webhookBody, constantLoad } = require('../lib/load');
const { sampleRss } = require('../lib/processes');
const { waitForDrain } = require('../lib/deliveries');
const { ms, mb, rate } = require('../lib/report');

async function scenarioSoak(context, seeding) {
  const { captureUrl, service, db } = context;
  const firstMinuteMs = Math.min(60, CONFIG.soakSeconds / 5) * 1000;
  log(
    `scenario 4: soak at ${CONFIG.soakRate} requests/s for ${CONFIG.soakSeconds} s${seeding ? ' (scenario 3 seeds meanwhile)' : ''}`,
  );
  const rss = sampleRss(service.pid, 1000);
  const [soak, seeded] = await Promise.all([
    constantLoad(captureUrl, {
      connections: CONFIG.soakConnections,
      duration: CONFIG.soakSeconds,
      overallRate: CONFIG.soakRate,
      body: webhookBody(1024),
    }),
    seeding ? seeding() : Promise.resolve(null),
  ]);
  rss.stop();
  ledger.acknowledged += soak.ok;
  ledger.serviceErrors += soak.errors;
  ledger.inFlightAtStop += CONFIG.soakConnections;
  const atFirstMinute = rss.medianBetween(firstMinuteMs - 10_000, firstMinuteMs);
  const atEnd = rss.medianBetween(CONFIG.soakSeconds * 1000 - 10_000, CONFIG.soakSeconds * 1000 + 5000);
  const growth = (atEnd - atFirstMinute) / atFirstMinute;
  addRow(
    '4. memory (RSS of the service)',
    `soak ${CONFIG.soakSeconds} s at ${CONFIG.soakRate}/s: after ${firstMinuteMs / 1000} s → at the end`,
    `${mb(atFirstMinute)} → ${mb(atEnd)} (${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)} %)`,
    '≤ +10 %',
    growth <= 0.1,
  );
  notes.push(
    `Soak: ${rate(soak.perSecond)} achieved (target ${CONFIG.soakRate}/s), capture p50 ${ms(soak.p50)} / p99 ${ms(soak.p99)}, ` +
      `${soak.errors} errors; peak RSS in the soak ${mb(rss.peak())}` +
      (seeded ? `; scenario 3's seeding ran meanwhile (${seeded.seconds.toFixed(0)} s).` : '.'),
  );
  await waitForDrain(db, 'after the soak');
  return seeded;
}

module.exports = { scenarioSoak };
