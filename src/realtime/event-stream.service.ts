import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import type { Environment } from '../config/environment';
import { REDIS } from '../redis/redis.module';
import {
  type ChangedRange,
  changesChannel,
  type EventChange,
  STREAM_HISTORY_MS,
  streamKey,
  watchedKey,
} from './event-change.publisher';

/** A change as a dashboard receives it, with its change id (its SSE `id:`). */
export interface StreamedChange extends EventChange {
  id: string;
}

type Listener = (change: StreamedChange) => void;

/** How often a process renews its watch on the endpoints it has dashboards open for (watchedKey). */
export const WATCH_RENEW_MS = 60_000;
/** Stream entries read per XRANGE call: a dashboard resuming after minutes away may have many more. */
export const READ_PAGE_ENTRIES = 1000;

/**
 * Compares stream entry ids (`<ms>-<seq>`) or change ids (`<ms>-<seq>-<index>`: the change's place in
 * its entry). An entry id sorts after every change of that entry: it stands for the whole entry, as the
 * ids that dashboards were sent when an entry held one change did.
 */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq, aIndex = Number.MAX_SAFE_INTEGER] = a.split('-').map(Number);
  const [bMs, bSeq, bIndex = Number.MAX_SAFE_INTEGER] = b.split('-').map(Number);
  return aMs - bMs || aSeq - bSeq || aIndex - bIndex;
}

/** A change id, or an entry id (what a dashboard was sent before entries held many changes). */
export function isStreamId(value: string): boolean {
  return /^\d{1,15}-\d{1,10}(?:-\d{1,9})?$/.test(value);
}

/** The entry id of a change id (or of an entry id). */
function entryIdOf(id: string): string {
  const [ms, seq] = id.split('-');
  return `${ms}-${seq}`;
}

/** The endpoints with a dashboard open in this process, and where the reading of their stream stands. */
interface EndpointReader {
  listeners: Set<Listener>;
  /**
   * The stream id up to which the changes were read: at first, the stream's last id when the first
   * dashboard came (undefined if Redis could not say: then the first announced range is read whole).
   */
  readUpTo?: string;
  /** True until that first id is known; announced ranges wait meanwhile in `waiting`, merged into one. */
  starting: boolean;
  waiting?: [firstId: string, lastId: string];
  /** Settles once that first id is known. */
  started: Promise<void>;
}

/**
 * The reading side of the real-time layer in an API process: one Redis subscription for the whole
 * process says which endpoints changed; the changes of those with a dashboard open here are read from
 * the endpoint's Redis stream and fanned out to its dashboards, in order (one connection reads them all).
 * The same stream gives the changes a reconnecting dashboard missed. Changes are written only for
 * watched endpoints (watchedKey): this process watches each endpoint it has a dashboard open for, renews
 * the watch every WATCH_RENEW_MS and whenever its Redis connection is ready again (a watch that failed
 * while Redis was away, or that a Redis restarted empty lost, is not left until the next renewal), and
 * once more when the last dashboard leaves, so the watch lapses STREAM_HISTORY_MS after that.
 */
@Injectable()
export class EventStreamService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(EventStreamService.name);
  private readonly readers = new Map<string, EndpointReader>();
  private readonly prefix: string;
  private subscriber?: Redis;
  private renewal?: NodeJS.Timeout;
  private readonly renewalFailed = (error: Error) =>
    this.logger.warn(`real-time watch renewal failed: ${error.message}`);
  private readonly renewWatchesNow = () => this.renewWatches();

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
    this.renewal = setInterval(this.renewWatchesNow, WATCH_RENEW_MS).unref();
    this.redis.on('ready', this.renewWatchesNow);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.renewal);
    this.redis.off('ready', this.renewWatchesNow);
    this.subscriber?.disconnect();
  }

  /**
   * Listens to an endpoint's changes. Resolves, with the function that stops listening, once every change
   * added to the endpoint's stream from then on will reach the listener: for the first listener of an
   * endpoint in this process, once the stream's last id is read.
   */
  async listen(endpointId: string, listener: Listener): Promise<() => void> {
    const reader = this.readers.get(endpointId) ?? this.startReading(endpointId);
    reader.listeners.add(listener);
    await reader.started;
    return () => {
      reader.listeners.delete(listener);
      if (reader.listeners.size === 0 && this.readers.get(endpointId) === reader) {
        this.readers.delete(endpointId);
        this.watch([endpointId]).catch(this.renewalFailed);
      }
    };
  }

  /**
   * Where this process's reading of the endpoint's stream stands, once a `listen` has resolved: every
   * change after it reaches the listeners. Undefined when it could not be read (Redis away).
   */
  position(endpointId: string): string | undefined {
    return this.readers.get(endpointId)?.readUpTo;
  }

  /** The endpoint's changes after `lastId` that the stream still holds (the last STREAM_HISTORY_MS). */
  async since(endpointId: string, lastId: string): Promise<StreamedChange[]> {
    const changes = await this.read(endpointId, entryIdOf(lastId), '+');
    return changes.filter((change) => compareStreamIds(change.id, lastId) > 0);
  }

  /** Marks the endpoints watched for STREAM_HISTORY_MS from now (never shortening a watch). */
  private watch(endpointIds: string[]): Promise<unknown> {
    const until = Date.now() + STREAM_HISTORY_MS;
    return this.redis.zadd(watchedKey(this.prefix), 'GT', ...endpointIds.flatMap((id) => [until, id]));
  }

  /** Renews the watch on this process's endpoints, and drops the watches that have lapsed. */
  private renewWatches(): void {
    const endpointIds = [...this.readers.keys()];
    Promise.all([
      endpointIds.length > 0 ? this.watch(endpointIds) : undefined,
      this.redis.zremrangebyscore(watchedKey(this.prefix), '-inf', Date.now()),
    ]).catch(this.renewalFailed);
  }

  /**
   * The endpoint is watched first, so that every change published from then on is written to its stream.
   * Reading starts after the stream's last id, not at the first announced range: a change another process
   * added earlier but announced later than that range is then read too.
   */
  private startReading(endpointId: string): EndpointReader {
    const reader: EndpointReader = { listeners: new Set(), starting: true, started: Promise.resolve() };
    const stream = streamKey(this.prefix, endpointId);
    reader.started = this.watch([endpointId])
      .then(() => this.redis.xrevrange(stream, '+', '-', 'COUNT', 1))
      .then(
        ([last]) => last?.[0] ?? '0-0',
        (error: Error) => {
          this.logger.warn(`real-time start failed: ${error.message}`);
          return undefined;
        },
      )
      .then((lastId) => {
        reader.readUpTo = lastId;
        reader.starting = false;
        if (reader.waiting) this.advance(endpointId, reader, ...reader.waiting);
        reader.waiting = undefined;
      });
    this.readers.set(endpointId, reader);
    return reader;
  }

  /** The changes of the entries from `start` to `end`, read a page of READ_PAGE_ENTRIES at a time. */
  private async read(endpointId: string, start: string, end: string): Promise<StreamedChange[]> {
    const stream = streamKey(this.prefix, endpointId);
    const changes: StreamedChange[] = [];
    for (let from = start; ;) {
      const entries = await this.redis.xrange(stream, from, end, 'COUNT', READ_PAGE_ENTRIES);
      for (const [entryId, fields] of entries) {
        // An entry holds one field: `changes`, or `change` (one change) when an earlier version wrote it.
        const value = JSON.parse(fields[1]) as EventChange[] | EventChange;
        const entryChanges = Array.isArray(value) ? value : [value];
        entryChanges.forEach((change, index) => changes.push({ id: `${entryId}-${index}`, ...change }));
      }
      if (entries.length < READ_PAGE_ENTRIES) return changes;
      from = `(${entries[entries.length - 1][0]}`;
    }
  }

  private dispatch(message: string): void {
    if (this.readers.size === 0) return;
    let ranges: ChangedRange[];
    try {
      ranges = JSON.parse(message) as ChangedRange[];
    } catch {
      return;
    }
    if (!Array.isArray(ranges)) return;
    for (const [endpointId, firstId, lastId] of ranges) {
      const reader = this.readers.get(endpointId);
      if (!reader) continue;
      if (!reader.starting) this.advance(endpointId, reader, firstId, lastId);
      else if (!reader.waiting) reader.waiting = [firstId, lastId];
      else if (compareStreamIds(lastId, reader.waiting[1]) > 0) reader.waiting[1] = lastId;
    }
  }

  /**
   * Reads the endpoint's changes up to `lastId` from where the last read stopped, not from this range's
   * first id: two processes adding to one stream may announce their ranges in the other order, and what
   * one added in between is then read once, in stream order.
   */
  private advance(endpointId: string, reader: EndpointReader, firstId: string, lastId: string): void {
    const after = reader.readUpTo;
    if (after !== undefined && compareStreamIds(lastId, after) <= 0) return;
    reader.readUpTo = lastId;
    this.read(endpointId, after === undefined ? firstId : `(${after}`, lastId).then(
      (changes) => {
        for (const change of changes) for (const listener of reader.listeners) listener(change);
      },
      (error: Error) => this.logger.warn(`real-time read failed: ${error.message}`),
    );
  }
}
