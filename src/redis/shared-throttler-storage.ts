import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type { OnApplicationShutdown } from '@nestjs/common';
import { type ThrottlerStorage, ThrottlerStorageService } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { withRedisTimeout } from '../common/redis-timeout';
import { SHARED_COUNT_TIMEOUT_MS } from './shared-counter';

type ThrottlerRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/**
 * The throttler's counts (the auth and AI limits) in Redis under `${prefix}:`, so that every API process
 * counts against one limit (@nest-lab/throttler-storage-redis, on a connection of its own that puts the
 * prefix before its keys). While Redis is away or slow to answer, the process counts in its own memory
 * instead: the limits then hold per process, and logins keep working.
 */
export class SharedThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly shared: ThrottlerStorageRedisService;
  private readonly local = new ThrottlerStorageService();

  constructor(redis: Redis, prefix: string) {
    this.redis = redis.duplicate({ keyPrefix: `${prefix}:` });
    this.redis.on('error', () => undefined); // reconnects by itself; counts stay local meanwhile
    this.shared = new ThrottlerStorageRedisService(this.redis);
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerRecord> {
    const countHere = () => this.local.increment(key, ttl, limit, blockDuration, throttlerName);
    if (this.redis.status !== 'ready') return countHere();
    return withRedisTimeout(
      this.shared.increment(key, ttl, limit, blockDuration, throttlerName),
      SHARED_COUNT_TIMEOUT_MS,
    ).catch(countHere);
  }

  async onApplicationShutdown(): Promise<void> {
    this.local.onApplicationShutdown();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
