// Figures and the one table the benchmark prints.
const os = require('node:os');
const { execFileSync } = require('node:child_process');

/** Nearest-rank percentile of numbers (sorted here). */
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const ms = (value) =>
  Number.isFinite(value) ? `${value < 10 ? value.toFixed(1) : Math.round(value)} ms` : 'n/a';
const mb = (bytes) => (Number.isFinite(bytes) ? `${Math.round(bytes / 1024 / 1024)} MB` : 'n/a');
const count = (value) => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : 'n/a');
const rate = (value) => (Number.isFinite(value) ? `${count(value)}/s` : 'n/a');

function machine(postgresVersion) {
  let memory = `${Math.round(os.totalmem() / 1024 ** 3)} GiB`;
  try {
    memory = execFileSync('free', ['-h']).toString().split('\n')[1].split(/\s+/)[1];
  } catch {
    // not Linux: os.totalmem() it is
  }
  return {
    cpus: `${os.availableParallelism?.() ?? os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}`,
    memory,
    node: process.version,
    postgres: postgresVersion,
    os: `${os.type()} ${os.release()}`,
  };
}

/** rows: [{scenario, figure, value, target, ok}] (ok: true, false, or null when there is no target). */
function table(rows) {
  const mark = (ok) => (ok === true ? 'met' : ok === false ? '**missed**' : '');
  const lines = ['| scenario | figure | measured | target | |', '|---|---|---|---|---|'];
  for (const row of rows) {
    lines.push(`| ${row.scenario} | ${row.figure} | ${row.value} | ${row.target ?? ''} | ${mark(row.ok)} |`);
  }
  return lines.join('\n');
}

module.exports = { percentile, ms, mb, count, rate, machine, table };
