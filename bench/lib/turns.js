// Capture measured in turns (scenarios 1 and 7): Hooktrail, the reference and the floor each take the same
// load for a share of the time, round after round; the notes of what happened beside the turns, and the
// targets the scenarios' rows are judged by.
const { CONFIG, names } = require('./config');
const { addRow, notes } = require('./results');
const { constantLoad, meteredLoad, joinRuns } = require('./load');
const { cpuMeter, backendsOf } = require('./processes');
const { waitForDrain } = require('./deliveries');
const { count, ms, rate } = require('./report');

/** Rounds of scenarios 1 and 7: in each, every server takes the load for its share of the time. */
const ROUNDS = 4;

/** One server's turns as one run: its rate over their time, its CPU per 2xx, its answers' percentiles. */
function joinTurns(turns) {
  const joined = joinRuns(turns);
  const sum = (pick) => turns.reduce((total, turn) => total + pick(turn), 0);
  return {
    ...joined,
    duplicates: sum((turn) => turn.duplicates ?? 0),
    processUs: sum((turn) => turn.processUs * turn.ok) / Math.max(1, joined.ok),
    databaseUs: sum((turn) => turn.databaseUs * turn.ok) / Math.max(1, joined.ok),
  };
}

/**
 * A load (constantLoad's, or `loader`'s) on each of `servers` ({url, pid, backends, afterTurn?}) in turn:
 * a warm-up of each, then ROUNDS rounds, the order rotated each round, CONFIG.captureSeconds in all for
 * each server; a server's `afterTurn` runs after each of its runs (Hooktrail's: its delivery backlog
 * drains, so that its worker does not share the others' turns). Until session 51 each server took its
 * load in one go, the reference a minute and a half before Hooktrail: on a machine whose speed drifts
 * within minutes (BENCHMARKS.md, sessions 48 to 50) the drift fell on one side of the ratio; taking turns
 * spreads it over all. Returns, for each server, its turns as one metered run (joinTurns), its warm-up,
 * and the CPU its process used during the others' turns (`asideMs`, which should be little).
 */
async function takingTurns(servers, load, loader = constantLoad) {
  const warmups = [];
  for (const { url, afterTurn } of servers) {
    warmups.push(await loader(url, { ...load, duration: CONFIG.warmupSeconds }));
    await afterTurn?.();
  }
  const turns = servers.map(() => []);
  const asideMs = servers.map(() => 0);
  const duration = CONFIG.captureSeconds / ROUNDS;
  for (let round = 0; round < ROUNDS; round += 1)
    for (let turn = 0; turn < servers.length; turn += 1) {
      const index = (round + turn) % servers.length;
      const { url, pid, backends, afterTurn } = servers[index];
      const aside = servers.map((server) => cpuMeter(async () => [server.pid]));
      await Promise.all(aside.map((meter) => meter.start()));
      turns[index].push(await meteredLoad(url, { ...load, duration }, pid, backends, loader));
      const used = await Promise.all(aside.map((meter) => meter.stop()));
      used.forEach((ms, other) => (asideMs[other] += other === index ? 0 : ms));
      await afterTurn?.();
    }
  return turns.map((runs, index) => ({
    ...joinTurns(runs),
    warmup: warmups[index],
    asideMs: asideMs[index],
  }));
}

/**
 * Hooktrail, the reference and the floor (at `floorUrl`) as takingTurns' servers, in that order; with a
 * delivery worker in the service, Hooktrail's backlog is drained after each of its turns, and its drains
 * are added up in `drains`.
 */
function capturingServers(context, url, floorUrl, drains) {
  const { db } = context;
  const drainAfterTurn = async () => {
    const drain = await waitForDrain(db, 'after a turn');
    drains.backlog += drain.backlog;
    drains.seconds += drain.seconds;
  };
  return [
    { url, pid: context.service.pid, backends: backendsOf(db, names.serviceDb), afterTurn: drainAfterTurn },
    {
      url: context.baselineUrl,
      pid: context.baseline.process.pid,
      backends: backendsOf(db, names.baselineDb),
    },
    { url: floorUrl, pid: context.floor.process.pid, backends: backendsOf(db, names.baselineDb) },
  ];
}

/** A note of the deliveries Hooktrail's worker had left after its turns (capturingServers' `drains`). */
const drainNote = (label, drains) =>
  `${label} left ${count(drains.backlog)} deliveries queued behind the captures of its warm-up and turns ` +
  `(the worker runs in the same process and delivers during the load); they drained after each in ` +
  `${drains.seconds.toFixed(0)} s in all.`;

/** A note of the CPU the servers' processes used while the others took their turns. */
const asideNote = (label, [measured, reference, floor]) =>
  `${label}: while the others took their turns, Hooktrail's process used ${Math.round(measured.asideMs)} ms ` +
  `of CPU, the reference's ${Math.round(reference.asideMs)} ms, the floor's ${Math.round(floor.asideMs)} ms ` +
  `(${ROUNDS} turns of ${CONFIG.captureSeconds / ROUNDS} s each).`;

/**
 * Hooktrail (at `url`), the reference and the floor (at `floorUrl`) take turns under `load` (takingTurns,
 * with `loader`); with a delivery worker in the service, Hooktrail's backlog is drained after each of its
 * turns. Notes, under `label`, the CPU each used during the others' turns and, with a worker, the drains.
 * Returns takingTurns' runs: Hooktrail's, the reference's and the floor's.
 */
async function captureTurns(label, context, { url, floorUrl }, load, loader) {
  const drains = { backlog: 0, seconds: 0 };
  const runs = await takingTurns(capturingServers(context, url, floorUrl, drains), load, loader);
  notes.push(asideNote(label, runs));
  if (CONFIG.appRole !== 'api') notes.push(drainNote(label, drains));
  return runs;
}

/**
 * Scenario 1's and 7's targets: issue [2/6]'s for capture alone (`BENCH_APP_ROLE=api`), issue [1/6]'s for
 * capture while the same process forwards every capture (`APP_ROLE=all`, the default).
 */
const CAPTURE_TARGET =
  CONFIG.appRole === 'api'
    ? { ratio: 1.5, p99Ms: 50, issue: '[2/6]' }
    : { ratio: 0.5, p99Ms: 100, issue: '[1/6]' };

/**
 * A capture scenario's rows of requests a second and latency, Hooktrail's judged by CAPTURE_TARGET (its
 * ratio to the reference, its p99), then the floor's requests a second and its ratio to the reference.
 * `figures` names the rows that differ between scenarios: the reference's requests a second, Hooktrail's
 * latency and the floor's requests a second.
 */
function addTargetRows(scenario, [measured, reference, floor], figures) {
  const { ratio: least, p99Ms, issue } = CAPTURE_TARGET;
  const ratio = measured.perSecond / reference.perSecond;
  addRow(scenario, 'Hooktrail requests/s', rate(measured.perSecond));
  addRow(scenario, figures.reference, rate(reference.perSecond));
  addRow(
    scenario,
    'ratio Hooktrail / reference',
    `${ratio.toFixed(2)}×`,
    `≥ ${least}× (issue ${issue})`,
    ratio >= least,
  );
  addRow(
    scenario,
    figures.latency,
    `${ms(measured.p50)} / ${ms(measured.p99)}`,
    `p99 ≤ ${p99Ms} ms`,
    measured.p99 <= p99Ms,
  );
  addRow(scenario, 'reference latency p50 / p99', `${ms(reference.p50)} / ${ms(reference.p99)}`);
  addRow(
    scenario,
    figures.floor,
    `${rate(floor.perSecond)}, ${(floor.perSecond / reference.perSecond).toFixed(2)}×`,
  );
}

module.exports = { ROUNDS, captureTurns, addTargetRows };
