/* global AbortSignal */
// Child processes of the benchmark: the service (production build), the reference server, and the
// HTTPS sink; readiness checks, RSS sampling, CPU metering (of PostgreSQL's backends too), and stopping
// them (each by its own pid).
const { spawn, fork } = require('node:child_process');
const { createWriteStream, readFileSync } = require('node:fs');
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const ROOT = join(__dirname, '..', '..');

/**
 * Starts a node script with the environment given (and PATH), output kept in memory (the tail of it);
 * `options.command` runs another program (a launcher that execs node) instead of this node;
 * `options.logFile` also appends all of its output to that file.
 */
function startNode(label, args, env, options = {}) {
  const child = spawn(options.command ?? process.execPath, args, {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  if (options.logFile) {
    const file = createWriteStream(options.logFile, { flags: 'a' });
    child.stdout.pipe(file);
    child.stderr.pipe(file);
  }
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  return { label, child, pid: child.pid, exited, output: () => output };
}

/** Polls `url` until it answers 2xx, or throws after `timeoutMs` (or when the process exits). */
async function waitForHttp(processInfo, url, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (processInfo.child.exitCode !== null || processInfo.child.signalCode !== null) {
      throw new Error(`${processInfo.label} exited early:\n${processInfo.output()}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${processInfo.label} did not answer ${url} in ${timeoutMs} ms:\n${processInfo.output()}`);
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
async function stopProcess(processInfo, graceMs = 15_000) {
  if (!processInfo || processInfo.child.exitCode !== null || processInfo.child.signalCode !== null) return;
  processInfo.child.kill('SIGTERM');
  const killed = await Promise.race([processInfo.exited.then(() => false), sleep(graceMs).then(() => true)]);
  if (killed) {
    processInfo.child.kill('SIGKILL');
    await processInfo.exited;
  }
}

/** Resident set size of a process in bytes (Linux /proc; `ps` elsewhere); null when it is gone. */
function rssBytes(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    try {
      return (
        Number(
          execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
            .toString()
            .trim(),
        ) * 1024 || null
      );
    } catch {
      return null;
    }
  }
}

const CLOCK_TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system) a process has used, in ms (Linux /proc); null when unknown. */
function cpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  } catch {
    return null;
  }
}

/** Summed CPU ms of a set of processes at two moments: start(), then stop() gives the difference. */
function cpuMeter(pidsNow) {
  let before = new Map();
  const read = async () => new Map((await pidsNow()).map((pid) => [pid, cpuMs(pid) ?? 0]));
  return {
    async start() {
      before = await read();
    },
    async stop() {
      const after = await read();
      let used = 0;
      for (const [pid, ms] of after) used += ms - (before.get(pid) ?? 0);
      return used;
    },
  };
}

/** The PostgreSQL backends serving a database (their CPU is the database's share of a request). */
const backendsOf = (db, database) => async () =>
  (
    await db.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
      database,
    ])
  ).rows.map((row) => row.pid);

/** Samples the RSS of `pid` every `intervalMs` until stopped: {samples: [{t, rss}], stop()}. */
function sampleRss(pid, intervalMs = 250) {
  const samples = [];
  const started = Date.now();
  const take = () => {
    const rss = rssBytes(pid);
    if (rss !== null) samples.push({ t: Date.now() - started, rss });
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    samples,
    peak: () => samples.reduce((max, sample) => Math.max(max, sample.rss), 0),
    /** Median RSS of the samples taken between `fromMs` and `toMs` after the start. */
    medianBetween(fromMs, toMs) {
      const values = samples
        .filter((sample) => sample.t >= fromMs && sample.t <= toMs)
        .map((sample) => sample.rss)
        .sort((a, b) => a - b);
      return values.length === 0 ? null : values[Math.floor(values.length / 2)];
    },
    stop() {
      clearInterval(timer);
      take();
    },
  };
}

/** The HTTPS sink in a child process, with a promise-based message interface. */
async function startSink(cert, key) {
  const child = fork(join(__dirname, 'sink.js'), [], {
    env: { PATH: process.env.PATH, SINK_CERT: cert, SINK_KEY: key },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map();
  child.on('message', (message) => {
    const resolve = waiting.get(message.reply);
    if (resolve) {
      waiting.delete(message.reply);
      resolve(message);
    }
  });
  const ask = (cmd, extra = {}) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the sink did not answer ${cmd}`)), 30_000);
      waiting.set(cmd, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
      child.send({ cmd, ...extra });
    });
  const ready = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the sink did not start')), 10_000);
    waiting.set('ready', (message) => {
      clearTimeout(timer);
      resolve(message);
    });
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url: `https://127.0.0.1:${ready.port}/hooks`,
    pid: child.pid,
    phase: (name) => ask('phase', { name }),
    stats: () => ask('stats'),
    markers: async () => new Map((await ask('markers')).markers),
    async close() {
      if (child.exitCode !== null) return;
      child.send({ cmd: 'close' });
      await Promise.race([exited, sleep(5000).then(() => child.kill('SIGKILL'))]);
    },
  };
}

module.exports = {
  ROOT,
  startNode,
  waitForHttp,
  stopProcess,
  rssBytes,
  sampleRss,
  startSink,
  cpuMs,
  cpuMeter,
  backendsOf,
};
