import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { api } from './support/api-client';
import { spawnService, stopService, waitForHealth } from './support/service-process';
import { isolatedEnvironment, removeIsolated } from './support/test-app';

/** Starts src/main.ts with `env` and returns its exit code and output once it stops by itself. */
async function failedStart(env: Record<string, string>) {
  const started = Date.now();
  const service = await spawnService(env, { waitForHealth: false });
  const code = await service.exited;
  const lines = service
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '');
  return { code, lines, seconds: (Date.now() - started) / 1000 };
}

describe('start-up', () => {
  it.each([
    ['PORT=abc', { PORT: 'abc' }, /^Configuration error: PORT must be a whole number/],
    ['APP_ROLE=both', { APP_ROLE: 'both' }, /^Configuration error: APP_ROLE must be one of all, api, worker/],
    [
      'DATABASE_URL=mysql://x',
      { DATABASE_URL: 'mysql://x' },
      /^Configuration error: DATABASE_URL must be a postgres:\/\/ URL/,
    ],
    [
      'NODE_ENV=production without JWT_SECRET',
      { NODE_ENV: 'production' },
      /^Configuration error: JWT_SECRET is required when NODE_ENV=production/,
    ],
    [
      'NODE_ENV=production without ENCRYPTION_KEY',
      { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) },
      /^Configuration error: ENCRYPTION_KEY is required when NODE_ENV=production/,
    ],
    [
      'an ENCRYPTION_KEY that is not 32 bytes in base64',
      { ENCRYPTION_KEY: 'c2hvcnQ=' },
      /^Configuration error: ENCRYPTION_KEY must be 32 bytes in base64 \(openssl rand -base64 32\) \(got a hidden value\)$/,
    ],
    [
      'a short JWT_SECRET',
      { JWT_SECRET: 'short' },
      /^Configuration error: JWT_SECRET must be at least 32 characters \(got a hidden value\)$/,
    ],
  ])('stops with one line naming the variable for %s', async (_label, env, message) => {
    const { code, lines } = await failedStart({ ...isolatedEnvironment(), ...env });
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(message);
  });

  it('stops within 15 s with one line when PostgreSQL cannot be reached', async () => {
    const { code, lines, seconds } = await failedStart({
      ...isolatedEnvironment(),
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/hooktrail',
    });
    expect(code).toBe(1);
    expect(seconds).toBeLessThan(15);
    expect(lines).toEqual([
      expect.stringMatching(
        /^PostgreSQL is not reachable at 127\.0\.0\.1:1 \(ECONNREFUSED\)\. Start it or set DATABASE_URL \(README, "Run it"\)\.$/,
      ),
    ]);
  });

  it('stops within 15 s with one line when Redis cannot be reached', async () => {
    const { code, lines, seconds } = await failedStart({
      ...isolatedEnvironment(),
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    expect(code).toBe(1);
    expect(seconds).toBeLessThan(15);
    expect(lines).toEqual([
      expect.stringMatching(
        /^Redis is not reachable at 127\.0\.0\.1:1 \(ECONNREFUSED\)\. Start it or set REDIS_URL \(README, "Run it"\)\.$/,
      ),
    ]);
  });

  it('says where the dashboard, the API docs and the capture URLs are in one info line, JSON off a terminal', async () => {
    const env = isolatedEnvironment({ LOG_LEVEL: 'info', SITE_URL: 'https://hooks.example.com' });
    const service = await spawnService(env);
    try {
      // The line is written as the server starts listening; the pipe may bring it after /health's answer.
      const deadline = Date.now() + 5_000;
      while (!service.output().includes('Hooktrail is running') && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const records = service
        .output()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { level: number; context?: string; msg: string });
      const info = records.filter((record) => record.level === 30);
      expect(info.map((record) => record.context)).not.toContain('RouterExplorer');
      expect(info.find((record) => record.context === 'Hooktrail')?.msg).toBe(
        'Hooktrail is running: dashboard https://hooks.example.com/ · API docs https://hooks.example.com/docs · ' +
          'capture URLs https://hooks.example.com/in/<token>',
      );
    } finally {
      await stopService(service);
      await removeIsolated(env);
    }
  });

  it('warns once that ENCRYPTION_KEY is not set, though the delivery thread makes a SecretBox of its own', async () => {
    const env = isolatedEnvironment({ LOG_LEVEL: 'warn', APP_ROLE: 'all' });
    const service = await spawnService(env);
    try {
      // Every warning of the start is written before the exit: the whole output is there once it exited.
      expect(await stopService(service, 'SIGTERM')).toBe(0);
      const warnings = service
        .output()
        .split('\n')
        .filter((line) => line.includes('ENCRYPTION_KEY is not set'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0])).toMatchObject({ level: 40, context: 'Secrets' });
    } finally {
      await stopService(service, 'SIGKILL');
      await removeIsolated(env);
    }
  });

  it('logs a line when a SIGTERM shutdown begins and one, with its duration, when it is done', async () => {
    const env = isolatedEnvironment({ LOG_LEVEL: 'info' });
    const service = await spawnService(env);
    try {
      expect(await stopService(service, 'SIGTERM')).toBe(0);
      const lines = service
        .output()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as { level: number; context?: string; msg: string })
        .filter((record) => record.context === 'Hooktrail' && record.level === 30)
        .map((record) => record.msg);
      expect(lines.slice(-2)).toEqual([
        'Hooktrail is shutting down (SIGTERM)',
        expect.stringMatching(/^Hooktrail stopped in \d+ ms$/),
      ]);
    } finally {
      await stopService(service, 'SIGKILL');
      await removeIsolated(env);
    }
  });

  it('creates a missing database, applies the migrations, and with APP_ROLE=worker serves /health but no API; SIGTERM exits 0', async () => {
    const env = isolatedEnvironment({ APP_ROLE: 'worker' });
    const service = await spawnService(env);
    try {
      await waitForHealth(service);
      const database = new Client({ connectionString: env.DATABASE_URL });
      await database.connect();
      const migrations = await database.query('select name from mikro_orm_migrations order by id');
      await database.end();
      expect(migrations.rows.map((row) => row.name)).toContain('Migration20261123000000_initial');
      const base = `http://127.0.0.1:${service.port}`;
      expect((await api(base, 'GET', '/health')).status).toBe(200);
      expect(
        (await api(base, 'POST', '/api/auth/login', { body: { email: 'a@b.c', password: 'x' } })).status,
      ).toBe(404);
      expect(await stopService(service, 'SIGTERM')).toBe(0);
    } finally {
      await stopService(service, 'SIGKILL');
      await removeIsolated(env);
    }
  });

  it('finishes an in-flight request on SIGTERM, then exits 0', async () => {
    const env = isolatedEnvironment();
    const service = await spawnService(env);
    try {
      const base = `http://127.0.0.1:${service.port}`;
      // Registration hashes a password with argon2id: a request that is still running when the signal comes.
      const inFlight = api(base, 'POST', '/api/auth/register', {
        body: { email: 'inflight@example.com', name: 'A', password: 'long enough' },
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      service.child.kill('SIGTERM');
      expect((await inFlight).status).toBe(201);
      expect(await service.exited).toBe(0);
    } finally {
      await stopService(service, 'SIGKILL');
      await removeIsolated(env);
    }
  });

  it('stores a capture whose body is still arriving on SIGTERM, answers it 200 with Connection: close, then exits 0', async () => {
    const env = isolatedEnvironment({ APP_ROLE: 'api' });
    const service = await spawnService(env);
    const db = new Client({ connectionString: env.DATABASE_URL });
    try {
      const base = `http://127.0.0.1:${service.port}`;
      const { accessToken: token } = (
        await api(base, 'POST', '/api/auth/register', {
          body: { email: 'closing@example.com', name: 'A', password: 'long enough' },
        })
      ).body;
      const endpoint = (await api(base, 'POST', '/api/endpoints', { token, body: { name: 'E' } })).body
        .endpoint;
      const answer = new Promise<{ status: number; connection: string | undefined; id: string }>(
        (resolve, reject) => {
          const capture = request(`${base}/in/${endpoint.public_token}`, { method: 'POST' }, (response) => {
            let text = '';
            response.on('data', (chunk: Buffer) => (text += chunk.toString()));
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                connection: response.headers.connection,
                id: JSON.parse(text).id,
              }),
            );
          });
          capture.on('error', reject);
          capture.write('{"type":"half');
          setTimeout(() => {
            service.child.kill('SIGTERM');
            setTimeout(() => capture.end(' and the rest"}'), 300);
          }, 100);
        },
      );
      const { status, connection, id } = await answer;
      expect({ status, connection }).toEqual({ status: 200, connection: 'close' });
      expect(await service.exited).toBe(0);
      await db.connect();
      const { rows } = await db.query('select body_text from events where id = $1', [id]);
      expect(rows).toEqual([{ body_text: '{"type":"half and the rest"}' }]);
    } finally {
      await db.end().catch(() => undefined);
      await stopService(service, 'SIGKILL');
      await removeIsolated(env);
    }
  });
});

describe('bin/hooktrail-server', () => {
  const API_FLAGS = '--max-semi-space-size=32 --no-allocation-site-pretenuring --liftoff-only';
  const DELIVERY_FLAGS = '--max-semi-space-size=8 --no-allocation-site-pretenuring --liftoff-only';
  const launcher = join(__dirname, '..', 'bin', 'hooktrail-server');
  let cwd: string;
  beforeEach(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'hooktrail-launcher-'));
  });
  afterEach(() => rm(cwd, { recursive: true, force: true }));

  /** The node flags the launcher starts the service with (node prints them instead of running the entry). */
  const nodeFlags = (env: Record<string, string>, args: string[] = []) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        'sh',
        [
          launcher,
          ...args,
          '-p',
          "process.execArgv.filter((flag) => /^--(max-semi|(no-)?allocation-site|(no-)?liftoff-only)/.test(flag)).join(' ')",
        ],
        { cwd, env: { PATH: process.env.PATH, ...env } },
        (error, stdout) => (error ? reject(error) : resolve(stdout.trim())),
      ),
    );

  it('gives an HTTP-only process a 32-MB semi-space and a process that delivers 8 MB, both without pretenuring and with WebAssembly at its baseline', async () => {
    expect(await nodeFlags({ APP_ROLE: 'api' })).toBe(API_FLAGS);
    expect(await nodeFlags({ APP_ROLE: 'all' })).toBe(DELIVERY_FLAGS);
    expect(await nodeFlags({ APP_ROLE: 'worker' })).toBe(DELIVERY_FLAGS);
    expect(await nodeFlags({})).toBe(DELIVERY_FLAGS);
  });

  it('reads APP_ROLE from ./.env as the service does, the environment first', async () => {
    await writeFile(join(cwd, '.env'), 'PORT=3000\nAPP_ROLE="api"\n');
    expect(await nodeFlags({})).toBe(API_FLAGS);
    expect(await nodeFlags({ APP_ROLE: 'all' })).toBe(DELIVERY_FLAGS);
  });

  it('passes the operator’s own flag after its own, so that it wins', async () => {
    expect(
      await nodeFlags({ APP_ROLE: 'api' }, [
        '--max-semi-space-size=16',
        '--allocation-site-pretenuring',
        '--no-liftoff-only',
      ]),
    ).toBe(`${API_FLAGS} --max-semi-space-size=16 --allocation-site-pretenuring --no-liftoff-only`);
  });
});
