import type Redis from 'ioredis';
import { withRedisTimeout } from '../common/redis-timeout';

/**
 * A count every process shares: adds one to `key` (which lapses `ttlMs` after its first count) and answers
 * the total. Rejects when Redis is not connected or has not answered within the caller's bound.
 */
export type SharedCount = (key: string, ttlMs: number) => Promise<number>;

/** How long a rate-limited request waits for Redis's count before its process counts it alone. */
export const SHARED_COUNT_TIMEOUT_MS = 250;

const COUNT = `
local total = redis.call('INCR', KEYS[1])
if total == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return total`;

type CountingRedis = Redis & { sharedCount(key: string, ttlMs: number): Promise<number> };

/** Counts under `${prefix}:` in one Redis call. */
export function sharedCounter(redis: Redis, prefix: string): SharedCount {
  redis.defineCommand('sharedCount', { numberOfKeys: 1, lua: COUNT });
  const counting = redis as CountingRedis;
  return (key, ttlMs) =>
    redis.status === 'ready'
      ? withRedisTimeout(counting.sharedCount(`${prefix}:${key}`, ttlMs), SHARED_COUNT_TIMEOUT_MS)
      : Promise.reject(new Error(`Redis is ${redis.status}`));
}
