import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { REDIS } from '../redis/redis.module';

/** setTimeout's longest delay; a key expiring later than that ends its streams when they next reconnect. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Ends what outlives a request made with an API key (a live stream) when the key stops working: revoked in
 * any API process (announced over Redis), or expired. Requests need none of this: each one checks its key.
 */
@Injectable()
export class ApiKeyRevocations implements OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyRevocations.name);
  private readonly channel: string;
  private readonly watchers = new Map<string, Set<() => void>>();
  private subscriber?: Redis;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    this.channel = `${config.get('REDIS_PREFIX', { infer: true })}:api-key-revoked`;
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriber?.disconnect();
  }

  /** Tells every process that the key is revoked. */
  async announce(keyId: string): Promise<void> {
    await this.redis
      .publish(this.channel, keyId)
      .catch((error: Error) => this.logger.warn(`could not announce a revoked API key: ${error.message}`));
  }

  /** Calls `end` once the key is revoked or expires; returns the function that stops watching. */
  watch(key: { id: string; expiresAt: string | null }, end: () => void): () => void {
    this.subscribe();
    const ends = this.watchers.get(key.id) ?? new Set();
    ends.add(end);
    this.watchers.set(key.id, ends);
    const untilExpiry = key.expiresAt === null ? Infinity : Date.parse(key.expiresAt) - Date.now();
    const expiry = untilExpiry <= MAX_TIMER_MS ? setTimeout(end, Math.max(untilExpiry, 0)) : undefined;
    return () => {
      clearTimeout(expiry);
      ends.delete(end);
      if (ends.size === 0 && this.watchers.get(key.id) === ends) this.watchers.delete(key.id);
    };
  }

  /** One subscription per process, made when the first stream opened with a key needs it. */
  private subscribe(): void {
    if (this.subscriber) return;
    this.subscriber = this.redis.duplicate({ maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, keyId: string) =>
      this.watchers.get(keyId)?.forEach((end) => end()),
    );
    this.subscriber
      .subscribe(this.channel)
      .catch((error: Error) => this.logger.warn(`subscribe failed: ${error.message}`));
  }
}
