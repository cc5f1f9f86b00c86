import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { REDIS } from '../redis/redis.module';

export type EventChangeType = 'event.created' | 'event.updated';

export interface EventChange {
  type: EventChangeType;
  endpointId: string;
  /** The event summary sent to dashboards (at least id, endpoint_id, status). */
  event: Record<string, unknown> & { id: string; endpoint_id: string; status: string };
}

/** How long a stream keeps changes, so a reconnecting dashboard resumes without gaps. */
export const STREAM_HISTORY_MS = 10 * 60 * 1000;

export function streamKey(prefix: string, endpointId: string): string {
  return `${prefix}:events:${endpointId}`;
}

export function changesChannel(prefix: string): string {
  return `${prefix}:event-changes`;
}

/**
 * The endpoints whose changes are kept: a sorted set of endpoint ids, each scored with the time (epoch ms)
 * until which it counts as watched. A process with a dashboard open on an endpoint keeps it there, and for
 * STREAM_HISTORY_MS after the last one closes, so that a reconnecting dashboard finds what it missed.
 */
export function watchedKey(prefix: string): string {
  return `${prefix}:watched-endpoints`;
}

/**
 * What the changes channel carries for each endpoint a flush touched: its id and the ids of the stream
 * entries that flush added (one per endpoint and flush, so first and last are the same entry when one
 * process announces; the readers handle any range). Readers with a dashboard open on the endpoint read
 * the entries from its stream (XRANGE); the others read nothing, so a capture's body crosses Redis once,
 * not once more for every process that listens.
 */
export type ChangedRange = [endpointId: string, firstId: string, lastId: string];

/** The field of a stream entry that holds its changes, a JSON array of EventChange in order. */
export const CHANGES_FIELD = 'changes';

/**
 * Publishes event changes for the real-time dashboard through Redis, so that every API process sees
 * what any process captured or delivered. The changes queued in one turn of the event loop, or while the
 * previous flush was being written, go to Redis together: one stream entry per endpoint holding all of that
 * endpoint's changes, in order (kept STREAM_HISTORY_MS, for Last-Event-ID resume), and one message on one
 * pub/sub channel saying which entry each endpoint gained (ChangedRange). One XADD per endpoint and flush,
 * not per change, and one flush at a time: a busy capture URL or a drain pays Redis per batch, or less.
 * Only watched endpoints (watchedKey) get their changes written; the others' are dropped after one look
 * at the watched set per flush, so captures and deliveries nobody watches cost no JSON and no Redis memory.
 * Best effort: a Redis outage never fails a capture or a delivery.
 */
@Injectable()
export class EventChangePublisher {
  private readonly logger = new Logger(EventChangePublisher.name);
  private readonly prefix: string;
  private pending = new Map<string, EventChange[]>();
  /** A flush is being written; what is queued meanwhile goes when it ends. */
  private flushing = false;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    this.prefix = config.get('REDIS_PREFIX', { infer: true });
  }

  /**
   * Queues changes; everything queued in one turn of the event loop, or while the previous flush is being
   * written, goes to Redis in the next flush.
   */
  publish(changes: EventChange[]): void {
    if (changes.length === 0 || this.redis.status !== 'ready') return;
    if (this.pending.size === 0 && !this.flushing) setImmediate(() => this.flush());
    for (const change of changes) {
      const queued = this.pending.get(change.endpointId);
      if (queued) queued.push(change);
      else this.pending.set(change.endpointId, [change]);
    }
  }

  private flush(): void {
    this.flushing = true;
    const byEndpoint = [...this.pending];
    this.pending = new Map();
    this.write(byEndpoint)
      .catch((error: Error) => this.logger.warn(`real-time publish failed: ${error.message}`))
      .finally(() => {
        this.flushing = false;
        if (this.pending.size > 0) this.flush();
      });
  }

  /**
   * Appends the changes of the watched endpoints among these to their streams, and announces them. The
   * watched set is read after the changes were queued: an endpoint watched before a change was published
   * gets it.
   */
  private async write(byEndpoint: [string, EventChange[]][]): Promise<void> {
    const until = await this.redis.zmscore(
      watchedKey(this.prefix),
      ...byEndpoint.map(([endpointId]) => endpointId),
    );
    const now = Date.now();
    const watched = byEndpoint.filter((_, index) => Number(until[index]) > now);
    if (watched.length === 0) return;
    const minId = String(now - STREAM_HISTORY_MS);
    const pipeline = this.redis.pipeline();
    for (const [endpointId, changes] of watched)
      pipeline.xadd(
        streamKey(this.prefix, endpointId),
        'MINID',
        '~',
        minId,
        '*',
        CHANGES_FIELD,
        JSON.stringify(changes),
      );
    const results = await pipeline.exec();
    const ranges: ChangedRange[] = [];
    (results ?? []).forEach(([error, id], index) => {
      if (!error) ranges.push([watched[index][0], id as string, id as string]);
    });
    if (ranges.length > 0) await this.redis.publish(changesChannel(this.prefix), JSON.stringify(ranges));
  }
}
