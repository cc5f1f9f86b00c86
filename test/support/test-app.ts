import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createApp } from '../../src/app.factory';
import { type Environment, loadEnvironment } from '../../src/config/environment';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestApp {
  app: NestFastifyApplication;
  env: Environment;
  /** http://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

/** Service variables with the database and the Redis prefix of one test file. */
export type IsolatedEnvironment = Record<string, string> &
  Record<'DATABASE_URL' | 'REDIS_URL' | 'REDIS_PREFIX', string>;

/** A unique database name and Redis prefix for one test file. */
export function isolatedEnvironment(overrides: Record<string, string> = {}): IsolatedEnvironment {
  const id = `${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  return {
    DATABASE_URL: `${POSTGRES_URL}/hooktrail_test_${id}`,
    REDIS_URL,
    REDIS_PREFIX: `hooktrail_test_${id}`,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    // Tests register many users from one IP; the rate-limit test sets its own limit.
    AUTH_RATE_LIMIT_PER_MIN: '10000',
    ...overrides,
  };
}

/** Drops the database on the server it lives on (the main test server, or a throwaway cluster). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const server = new URL(databaseUrl);
  const name = server.pathname.slice(1);
  server.pathname = '/postgres';
  const client = new Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name}" with (force)`);
  } finally {
    await client.end();
  }
}

export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** Drops what an isolated environment (isolatedEnvironment) made: its database and its Redis keys. */
export async function removeIsolated(
  env: Pick<IsolatedEnvironment, 'DATABASE_URL' | 'REDIS_URL' | 'REDIS_PREFIX'>,
): Promise<void> {
  await dropDatabase(env.DATABASE_URL);
  await deleteRedisKeys(env.REDIS_URL, env.REDIS_PREFIX);
}

/**
 * Starts the whole service in this process on a free port, with its own database and Redis prefix. Its
 * queue processors (APP_ROLE=all) run on this process's event loop (workerPlacement), not on a thread.
 * Node's own metrics are left out of its /metrics unless `processMetrics` (PROCESS_METRICS: their
 * collector would keep the test file's modules in Jest's worker for good).
 * The reliability tests start the production build as a process instead (startServiceProcess).
 */
export async function startTestApp(
  overrides: Record<string, string> = {},
  { processMetrics = false } = {},
): Promise<TestApp> {
  const env = loadEnvironment(isolatedEnvironment(overrides));
  let app: NestFastifyApplication | undefined;
  try {
    app = await createApp(env, { workersOnMainLoop: true, processMetrics });
    await app.listen({ port: 0, host: '127.0.0.1' });
  } catch (error) {
    // A service that fails to start (a migration that fails, a port) leaves neither its database nor keys.
    await app?.close().catch(() => undefined);
    await removeIsolated(env);
    throw error;
  }
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    app,
    env,
    url: `http://127.0.0.1:${port}`,
    async close() {
      await app.close();
      await removeIsolated(env);
    },
  };
}
