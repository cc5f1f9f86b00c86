import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { REDIS } from '../redis/redis.module';
import { changesChannel, type EventChange, streamKey } from './event-change.publisher';

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
 * process, fanned out to the open dashboard streams of each endpoint; the endpoint's Redis stream
 * gives the changes a reconnecting dashboard missed.
 */
@Injectable()
export class EventStreamService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(EventStreamService.name);
  private readonly listeners = new Map<string, Set<Listener>>();
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
      if (set.size === 0) this.listeners.delete(endpointId);
    };
  }

  /** The endpoint's changes after `lastId` that the stream still holds (the last STREAM_HISTORY_MS). */
  async since(endpointId: string, lastId: string): Promise<StreamedChange[]> {
    const entries = await this.redis.xrange(
      streamKey(this.prefix, endpointId),
      `(${lastId}`,
      '+',
      'COUNT',
      10_000,
    );
    return entries.map(([id, fields]) => ({ id, ...(JSON.parse(fields[1]) as EventChange) }));
  }

  private dispatch(message: string): void {
    let changes: StreamedChange[];
    try {
      changes = JSON.parse(message) as StreamedChange[];
    } catch {
      return;
    }
    if (!Array.isArray(changes)) return;
    for (const change of changes) {
      for (const listener of this.listeners.get(change.endpointId) ?? []) listener(change);
    }
  }
}
