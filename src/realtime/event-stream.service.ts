import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { REDIS } from '../redis/redis.module';
import { type ChangedRange, changesChannel, type EventChange, streamKey } from './event-change.publisher';

/** A change as a dashboard receives it: the stream id is its SSE `id:`. */
export interface StreamedChange extends EventChange {
  id: string;
}

type Listener = (change: StreamedChange) => void;

/** Stream ids are `<ms>-<seq>`: compares two of them. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(Number);
  const [bMs, bSeq] = b.split('-').map(Number);
  return aMs - bMs || aSeq - bSeq;
}

export function isStreamId(value: string): boolean {
  return /^\d{1,15}-\d{1,10}$/.test(value);
}

/**
 * The reading side of the real-time layer in an API process: one Redis subscription for the whole
 * process says which endpoints changed; the changes of those with a dashboard open here are read from
 * the endpoint's Redis stream and fanned out to its dashboards, in order (one connection reads them all).
 * The same stream gives the changes a reconnecting dashboard missed.
 */
@Injectable()
export class EventStreamService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(EventStreamService.name);
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Of each endpoint listened to here: the stream id up to which its changes were read. */
  private readonly readUpTo = new Map<string, string>();
  private readonly prefix: string;
  private subscriber?: Redis;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    this.prefix = config.get('REDIS_PREFIX', { infer: true });
  }

  onModuleInit(): void {
    this.subscriber = this.redis.duplicate({ maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel: string, message: string) => this.dispatch(message));
    this.subscriber
      .subscribe(changesChannel(this.prefix))
      .catch((error: Error) => this.logger.warn(`subscribe failed: ${error.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriber?.disconnect();
  }

  /** Listens to an endpoint's changes; returns the function that stops listening. */
  listen(endpointId: string, listener: Listener): () => void {
    const set = this.listeners.get(endpointId) ?? new Set<Listener>();
    set.add(listener);
    this.listeners.set(endpointId, set);
    return () => {
      set.delete(listener);
      if (set.size > 0) return;
      this.listeners.delete(endpointId);
      this.readUpTo.delete(endpointId);
    };
  }

  /** The endpoint's changes after `lastId` that the stream still holds (the last STREAM_HISTORY_MS). */
  since(endpointId: string, lastId: string): Promise<StreamedChange[]> {
    return this.read(endpointId, `(${lastId}`, '+');
  }

  private async read(endpointId: string, start: string, end: string): Promise<StreamedChange[]> {
    const entries = await this.redis.xrange(streamKey(this.prefix, endpointId), start, end, 'COUNT', 10_000);
    return entries.map(([id, fields]) => ({ id, ...(JSON.parse(fields[1]) as EventChange) }));
  }

  private dispatch(message: string): void {
    if (this.listeners.size === 0) return;
    let ranges: ChangedRange[];
    try {
      ranges = JSON.parse(message) as ChangedRange[];
    } catch {
      return;
    }
    if (!Array.isArray(ranges)) return;
    for (const [endpointId, firstId, lastId] of ranges) {
      if (!this.listeners.has(endpointId)) continue;
      // From where the last read of the endpoint stopped, not from this message's first id: two processes
      // adding to one stream may announce their ranges in the other order, and what one added in between
      // is then read once, in stream order.
      const after = this.readUpTo.get(endpointId);
      if (after !== undefined && compareStreamIds(lastId, after) <= 0) continue;
      this.readUpTo.set(endpointId, lastId);
      this.read(endpointId, after === undefined ? firstId : `(${after}`, lastId).then(
        (changes) => {
          for (const change of changes)
            for (const listener of this.listeners.get(endpointId) ?? []) listener(change);
        },
        (error: Error) => this.logger.warn(`real-time read failed: ${error.message}`),
      );
    }
  }
}
