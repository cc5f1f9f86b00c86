// A throwaway Redis and PostgreSQL for bench/soak-faults.js, which stops and starts them under the service:
// the shared servers on 5432 and 6379 are never touched. The same commands as the tests' own
// (test/support/redis-server.ts, test/support/postgres-server.ts), which are TypeScript for Jest.
const { spawn, execFile } = require('node:child_process');
const { chownSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir, userInfo } = require('node:os');
const { join } = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { promisify } = require('node:util');
const Redis = require('ioredis');
const { Client } = require('pg');

const run = promisify(execFile);
const POSTGRES_BIN = process.env.TEST_POSTGRES_BIN ?? '/usr/lib/postgresql/15/bin';
/** initdb and pg_ctl refuse to run as root: they run as this user then. */
const CLUSTER_USER = 'postgres';

/** Calls `attempt` every 100 ms until it resolves, or throws its last error after `timeoutMs`. */
async function retryUntil(attempt, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

/** `redis-server` on `port`, without persistence: a restart comes back empty, as a failover may. */
function throwawayRedis(port) {
  let child;
  const ping = async () => {
    const client = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
    } finally {
      if (client.status !== 'end') client.disconnect();
    }
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      await retryUntil(ping, 10_000);
    },
    /** SIGKILL: what the service sees of a crash or a failover. */
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A PostgreSQL cluster of its own (initdb in a temporary directory, trust authentication) on `port`. */
async function throwawayPostgres(port) {
  const directory = mkdtempSync(join(tmpdir(), 'hooktrail-soak-pg-'));
  const data = join(directory, 'data');
  const asClusterUser = (program, args) =>
    userInfo().uid === 0
      ? run('runuser', ['-u', CLUSTER_USER, '--', join(POSTGRES_BIN, program), ...args])
      : run(join(POSTGRES_BIN, program), args);
  if (userInfo().uid === 0) {
    const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
      run('id', ['-u', CLUSTER_USER]),
      run('id', ['-g', CLUSTER_USER]),
    ]);
    chownSync(directory, Number(uid), Number(gid));
  }
  await asClusterUser('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync']);
  const url = (database) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    url,
    async start() {
      await asClusterUser('pg_ctl', [
        'start',
        '-D',
        data,
        '-w',
        '-l',
        join(directory, 'server.log'),
        '-o',
        `-p ${port} -c listen_addresses=127.0.0.1 -k ${directory} -c max_connections=200`,
      ]);
      await retryUntil(async () => {
        const client = new Client({ connectionString: url('postgres') });
        await client.connect();
        await client.end();
      }, 10_000);
    },
    /** `immediate` is a crash: no checkpoint, recovery from the WAL at the next start. */
    stop: (mode = 'immediate') => asClusterUser('pg_ctl', ['stop', '-D', data, '-w', '-m', mode]),
    async destroy() {
      await asClusterUser('pg_ctl', ['stop', '-D', data, '-w', '-m', 'immediate']).catch(() => undefined);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

module.exports = { throwawayRedis, throwawayPostgres };
