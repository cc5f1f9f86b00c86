// Scenario 1, capture: Hooktrail, the reference (../shared/bench/baseline-capture.js) and the floor
// (bench/floor-capture.js) under the same load in the same run, taking turns (lib/turns.js): requests/s,
// latency, CPU per capture and errors, with the service's peak RSS meanwhile (a row of scenario 4, memory).
const { loadavg, availableParallelism } = require('node:os');
const { CONFIG, log } = require('../lib/config');
const { addRow, notes, ledger } = require('../lib/results');
const { sampleRss } = require('../lib/processes');
const { ROUNDS, captureTurns, addTargetRows } = require('../lib/turns');
const { capturePayloads, PAYLOADS } = require('../lib/payloads');
const { ms, mb } = require('../lib/report');

async function scenarioCapture(context) {
  const { service, captureUrl, floorUrl, db } = context;
  const load = { connections: CONFIG.connections, ...(await capturePayloads(db)) };
  log(
    `scenario 1: Hooktrail, the reference and the floor (bare node:http, group commit), ` +
      `${CONFIG.connections} connections, ${CONFIG.captureSeconds} s each in ${ROUNDS} turns`,
  );
  const rss = sampleRss(service.pid);
  const loadAvg = loadavg()[0];
  const runs = await captureTurns('Scenario 1', context, { url: captureUrl, floorUrl }, load);
  const [measured, reference, bare] = runs;
  const { warmup } = measured;
  const forwarding = CONFIG.appRole !== 'api';
  // Each timed run (the warm-up, every turn) may stop with a request in flight on every connection.
  ledger.acknowledged += warmup.ok + measured.ok;
  ledger.serviceErrors += warmup.errors + measured.errors;
  ledger.inFlightAtStop += CONFIG.connections * (1 + ROUNDS);
  const scenario = `1. capture, ${PAYLOADS}, ${CONFIG.connections} conn., ${CONFIG.captureSeconds} s`;
  addTargetRows(scenario, runs, {
    reference: `reference requests/s (same run, same load, ${ROUNDS} turns each)`,
    latency: 'Hooktrail latency p50 / p99',
    floor:
      'floor: the reference with group commit on bare node:http (bench/floor-capture.js), requests/s, ratio to the reference',
  });
  addRow(
    scenario,
    'floor latency p50 / p99; CPU per capture, Node + PostgreSQL',
    `${ms(bare.p50)} / ${ms(bare.p99)}; ${Math.round(bare.processUs)} + ${Math.round(bare.databaseUs)} µs`,
  );
  addRow(
    scenario,
    'CPU per stored capture, Hooktrail / reference: Node process + its PostgreSQL backends',
    `${Math.round(measured.processUs)} + ${Math.round(measured.databaseUs)} µs / ` +
      `${Math.round(reference.processUs)} + ${Math.round(reference.databaseUs)} µs`,
  );
  addRow(
    scenario,
    'errors Hooktrail / reference (non-2xx, socket errors, time-outs)',
    `${measured.errors + warmup.errors} / ${reference.errors}`,
    '0',
    measured.errors + warmup.errors === 0,
  );
  notes.push(
    `Scenario 1: 1-minute load average ${loadAvg.toFixed(1)} before its runs (${availableParallelism()} cores; ` +
      'above that, other work shared the machine). ' +
      (forwarding
        ? `Hooktrail's CPU per capture includes the delivery worker's, which forwards the captures during the load; ` +
          `scenarios 1 and 7 are judged by issue [1/6]'s targets for that (issue [2/6]'s, for capture alone, ` +
          'with BENCH_APP_ROLE=api).'
        : `APP_ROLE=api: no delivery worker runs, so the captures are stored and queued for routing, not forwarded.`),
  );
  rss.stop();
  addRow(
    '4. memory (RSS of the service)',
    forwarding
      ? "peak during scenario 1, the drains of its turns' backlogs included"
      : 'peak during scenario 1',
    mb(rss.peak()),
    '≤ 300 MB',
    rss.peak() <= 300 * 1024 * 1024,
  );
}

module.exports = { scenarioCapture };
