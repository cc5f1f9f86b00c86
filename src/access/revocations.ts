import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { afterCommit } from '../database/write-transaction';
import { REDIS } from '../redis/redis.module';

/** setTimeout's longest delay; a key expiring later than that ends its streams when they next reconnect. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What can stop a caller's access to something they hold open. */
export const revoked = {
  apiKey: (keyId: string) => `api-key:${keyId}`,
  /** The user left the team, was removed from it, or the team was deleted. */
  membership: (teamId: string, userId: string) => `member:${teamId}:${userId}`,
  /** The endpoint changed hands (moved into or out of a team): who may read it is decided again. */
  endpoint: (endpointId: string) => `endpoint:${endpointId}`,
};

/**
 * Ends what outlives a request (a live stream) when the access it was opened with stops: an API key revoked
 * or expired, a membership ended, an endpoint moved; announced over Redis, so in every API process.
 * Requests need none of this: each one is judged by the access component as it comes.
 */
@Injectable()
export class Revocations implements OnApplicationShutdown {
  private readonly logger = new Logger(Revocations.name);
  private readonly channel: string;
  private readonly watchers = new Map<string, Set<() => void>>();
  private subscriber?: Redis;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    this.channel = `${config.get('REDIS_PREFIX', { infer: true })}:access-revoked`;
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriber?.disconnect();
  }

  /**
   * Tells every process that access through `subject` (one of `revoked`) has ended, once the write that
   * ended it has committed: a stream ended before would reconnect, be judged on the rows as they were, and
   * stay open.
   */
  async announce(subject: string): Promise<void> {
    await afterCommit(() =>
      this.redis
        .publish(this.channel, subject)
        .then(() => undefined)
        .catch((error: Error) => this.logger.warn(`could not announce ${subject} revoked: ${error.message}`)),
    );
  }

  /** Calls `end` once `subject` is announced; returns the function that stops watching. */
  watch(subject: string, end: () => void): () => void {
    this.subscribe();
    const ends = this.watchers.get(subject) ?? new Set();
    ends.add(end);
    this.watchers.set(subject, ends);
    return () => {
      ends.delete(end);
      if (ends.size === 0 && this.watchers.get(subject) === ends) this.watchers.delete(subject);
    };
  }

  /** Calls `end` once the API key is revoked or expires; returns the function that stops watching. */
  watchApiKey(key: { id: string; expiresAt: string | null }, end: () => void): () => void {
    const unwatch = this.watch(revoked.apiKey(key.id), end);
    const untilExpiry = key.expiresAt === null ? Infinity : Date.parse(key.expiresAt) - Date.now();
    const expiry = untilExpiry <= MAX_TIMER_MS ? setTimeout(end, Math.max(untilExpiry, 0)) : undefined;
    return () => {
      clearTimeout(expiry);
      unwatch();
    };
  }

  /** One subscription per process, made when the first stream that can be revoked needs it. */
  private subscribe(): void {
    if (this.subscriber) return;
    this.subscriber = this.redis.duplicate({ maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, subject: string) =>
      this.watchers.get(subject)?.forEach((end) => end()),
    );
    this.subscriber
      .subscribe(this.channel)
      .catch((error: Error) => this.logger.warn(`subscribe failed: ${error.message}`));
  }
}
