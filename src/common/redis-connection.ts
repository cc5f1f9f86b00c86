import Redis, { type RedisOptions } from 'ioredis';
import { StartupError } from './startup-error';

/**
 * The longest wait between two reconnection attempts. Bull's own default grows to 20 s, so after an
 * outage the queues would resume up to 20 s after Redis is back; with this they resume within a second.
 */
const RECONNECT_MAX_DELAY_MS = 1000;

/** ioredis options for a redis:// URL, shared by Bull and the real-time fan-out. */
export function redisOptions(redisUrl: string): RedisOptions {
  const url = new URL(redisUrl);
  return {
    host: url.hostname || '127.0.0.1',
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : undefined,
    tls: url.protocol === 'rediss:' ? {} : undefined,
    retryStrategy: (attempt) => Math.min(attempt * 100, RECONNECT_MAX_DELAY_MS),
  };
}

/** Fails fast with one line when Redis does not answer. */
export async function checkRedis(redisUrl: string): Promise<void> {
  const options = redisOptions(redisUrl);
  const client = new Redis({
    ...options,
    connectTimeout: 5000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    lazyConnect: true,
  });
  let cause: NodeJS.ErrnoException | undefined;
  client.on('error', (error: NodeJS.ErrnoException) => (cause ??= error));
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const failure = cause ?? (error as NodeJS.ErrnoException);
    const reason = failure.code ?? failure.message;
    throw new StartupError(
      `Redis is not reachable at ${options.host}:${options.port} (${reason}). ` +
        'Start it or set REDIS_URL (README, "Run it").',
    );
  } finally {
    client.disconnect();
  }
}
