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
 * What the changes channel carries for each endpoint a flush touched: its id and the stream ids of its
 * first and last change in that flush. Readers with a dashboard open on the endpoint read the changes
 * from its stream (XRANGE); the others read nothing, so a capture's body crosses Redis once, not once more
 * for every process that listens.
 */
export type ChangedRange = [endpointId: string, firstId: string, lastId: string];

/**
 * Publishes event changes for the real-time dashboard through Redis, so that every API process sees
 * what any process captured or delivered: each change is appended to the endpoint's stream (kept
 * STREAM_HISTORY_MS, for Last-Event-ID resume), and one message per flush on one pub/sub channel says
 * which stream ids each endpoint gained (ChangedRange).
 * Best effort: a Redis outage never fails a capture or a delivery.
 */
@Injectable()
export class EventChangePublisher {
  private readonly logger = new Logger(EventChangePublisher.name);
  private readonly prefix: string;
  private pending: EventChange[] = [];

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    this.prefix = config.get('REDIS_PREFIX', { infer: true });
  }

  /** Queues changes; everything queued in one turn of the event loop goes to Redis in one round trip. */
  publish(changes: EventChange[]): void {
    if (changes.length === 0 || this.redis.status !== 'ready') return;
    if (this.pending.length === 0) setImmediate(() => this.flush());
    this.pending.push(...changes);
  }

  private flush(): void {
    const changes = this.pending;
    this.pending = [];
    const minId = Date.now() - STREAM_HISTORY_MS;
    const pipeline = this.redis.pipeline();
    for (const change of changes) {
      pipeline.xadd(
        streamKey(this.prefix, change.endpointId),
        'MINID',
        '~',
        String(minId),
        '*',
        'change',
        JSON.stringify(change),
      );
    }
    pipeline
      .exec()
      .then((results) => {
        const ranges = new Map<string, ChangedRange>();
        (results ?? []).forEach(([error, id], index) => {
          if (error) return;
          const endpointId = changes[index].endpointId;
          const range = ranges.get(endpointId);
          if (range) range[2] = id as string;
          else ranges.set(endpointId, [endpointId, id as string, id as string]);
        });
        if (ranges.size > 0)
          return this.redis.publish(changesChannel(this.prefix), JSON.stringify([...ranges.values()]));
      })
      .catch((error: Error) => this.logger.warn(`real-time publish failed: ${error.message}`));
  }
}
