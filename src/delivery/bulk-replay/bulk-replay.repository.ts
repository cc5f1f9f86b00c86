import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Knex } from '@mikro-orm/postgresql';
import { type EventFilters, eventFilterSql } from '../../events/events.repository';
import { isoColumn as iso } from '../../database/iso-column';
import {
  ENFORCES_VERIFICATION,
  EventRouting,
  type RouteCandidate,
  type StoredRequest,
  verificationBlock,
} from '../../ingest/routing';
import { insertDispatches } from '../replay.repository';
import { sqlOf } from '../../database/write-transaction';

export const BULK_REPLAY_STATUSES = ['running', 'completed', 'cancelled'] as const;
export type BulkReplayStatus = (typeof BULK_REPLAY_STATUSES)[number];

/** The filter of a bulk replay as it was asked for (validated; times as ISO 8601 UTC). */
export interface BulkReplayFilter {
  status?: string;
  from?: string;
  to?: string;
  q?: string;
}

export interface BulkReplayRow {
  id: string;
  endpoint_id: string;
  status: BulkReplayStatus;
  filter: BulkReplayFilter;
  total: number;
  done: number;
  created_at: string;
  finished_at: string | null;
}

/** An event of a chunk: its place, how its signature was judged, and its stored body's size. */
interface ChunkEvent {
  id: string;
  received_at: string;
  /** Deleted since the replay was made (retention): passed over, counted as done. */
  gone: boolean;
  verification_status: string;
  verification_reason: string | null;
  size: number;
}

interface ActiveDestination extends RouteCandidate {
  id: string;
}

/** A chunk's stored requests are read for its destinations' filters in groups of at most this many body bytes. */
const READ_BYTES = 8 * 1024 * 1024;
/** An event's stored body size, without reading the body. */
const STORED_SIZE = `coalesce(octet_length(body_text), 0) + coalesce(octet_length(body_bytes), 0)`;

/** What one chunk dispatched. */
export interface DispatchedChunk {
  /** Deliveries inserted (one per event and active destination), to enqueue. */
  deliveryIds: string[];
  /** False once the replay is over: completed with this chunk, or no longer running. */
  running: boolean;
}

const COLUMNS = `id, endpoint_id, status, filter, total, done, ${iso('created_at')} as created_at,
  ${iso('finished_at')} as finished_at`;
/** Most recent bulk replays listed per endpoint. */
const LIST_LIMIT = 100;

/** The filter back as the repository's EventFilters. */
function eventFilters(filter: BulkReplayFilter): EventFilters {
  return {
    status: filter.status as EventFilters['status'],
    from: filter.from === undefined ? undefined : new Date(filter.from),
    to: filter.to === undefined ? undefined : new Date(filter.to),
    q: filter.q,
  };
}

/**
 * Whether a replay keeps the list of the events it covers (`bulk_replay_events`), made with it: when it
 * filters by status, which moves on while the replay runs. The other filters (time range, `q`) hold for an
 * event for good, and are tested again at each chunk, for any number of events, without a list.
 */
const listsEvents = (filter: BulkReplayFilter) => filter.status !== undefined;

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
/** After a replay's cursor, the last event dispatched (bindings: its received_at and id, both null at first). */
const afterCursor = (receivedAt: string, id: string) =>
  `(${receivedAt}, ${id}) > (coalesce(?::timestamptz, '-infinity'), coalesce(?::uuid, '${NIL_UUID}'))`;

/** The next chunk of a replay that lists its events (bindings: the replay's id, its cursor, the size). */
const LISTED_CHUNK = `
  select s.event_id as id, s.received_at, e.id is null as gone, e.verification_status, e.verification_reason,
         ${STORED_SIZE} as size
  from bulk_replay_events s left join events e on e.id = s.event_id
  where s.bulk_replay_id = ? and ${afterCursor('s.received_at', 's.event_id')}
  order by s.received_at, s.event_id limit ?`;

/**
 * The next chunk of a replay whose filter is tested again (bindings: the filter's, the replay's
 * created_at, its cursor, the size).
 */
const matchedChunk = (filterSql: string) => `
  select id, received_at, false as gone, verification_status, verification_reason, ${STORED_SIZE} as size
  from events
  where ${filterSql} and received_at <= ?::timestamptz and ${afterCursor('received_at', 'id')}
  order by received_at, id limit ?`;

/**
 * Bulk replays and their dispatch. A replay covers the events that matched its filter when it was made
 * (received before its created_at), oldest first; its cursor is the last event dispatched.
 */
@Injectable()
export class BulkReplayRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return sqlOf(this.em);
  }

  /** Events of the endpoint matching `filter`, received up to now. */
  async count(endpointId: string, filter: BulkReplayFilter): Promise<number> {
    const where = eventFilterSql(endpointId, eventFilters(filter));
    const { rows } = await this.knex.raw(
      `select count(*)::int as total from events where ${where.sql} and received_at <= now()`,
      where.bindings as never[],
    );
    return rows[0].total;
  }

  /**
   * A running bulk replay of the matching events, counted in the same transaction; null when the endpoint
   * has no active destination (nothing would be sent).
   */
  async create(id: string, endpointId: string, filter: BulkReplayFilter): Promise<BulkReplayRow | null> {
    const where = eventFilterSql(endpointId, eventFilters(filter));
    return this.knex.transaction(async (trx) => {
      const active = await trx.raw(`select 1 from destinations where endpoint_id = ? and is_active limit 1`, [
        endpointId,
      ]);
      if (active.rows.length === 0) return null;
      const listed = listsEvents(filter);
      const { rows } = await trx.raw(
        `with matched as (
           select received_at, id from events where ${where.sql} and received_at <= now()
         ),
         replay as (
           insert into bulk_replays (id, endpoint_id, status, filter, total)
           select ?, ?, 'running', ?::jsonb, count(*)::int from matched
           returning ${COLUMNS}
         ),
         listed as (
           insert into bulk_replay_events (bulk_replay_id, received_at, event_id)
           select replay.id, matched.received_at, matched.id from replay, matched where ?
         )
         select * from replay`,
        [...where.bindings, id, endpointId, JSON.stringify(filter), listed] as never[],
      );
      return rows[0] as BulkReplayRow;
    });
  }

  async find(endpointId: string, id: string): Promise<BulkReplayRow | null> {
    const { rows } = await this.knex.raw(
      `select ${COLUMNS} from bulk_replays where id = ? and endpoint_id = ?`,
      [id, endpointId],
    );
    return (rows[0] as BulkReplayRow | undefined) ?? null;
  }

  /** The endpoint's most recent bulk replays, newest first. */
  async list(endpointId: string): Promise<BulkReplayRow[]> {
    const { rows } = await this.knex.raw(
      `select ${COLUMNS} from bulk_replays where endpoint_id = ? order by created_at desc, id desc limit ?`,
      [endpointId, LIST_LIMIT],
    );
    return rows as BulkReplayRow[];
  }

  /** Cancels a running replay (what was dispatched stays); a finished one is returned as it is. */
  async cancel(endpointId: string, id: string): Promise<BulkReplayRow | null> {
    await this.knex.raw(
      `with cancelled as (
         update bulk_replays set status = 'cancelled', finished_at = now()
         where id = ? and endpoint_id = ? and status = 'running'
         returning id
       )
       delete from bulk_replay_events where bulk_replay_id in (select id from cancelled)`,
      [id, endpointId],
    );
    return this.find(endpointId, id);
  }

  /**
   * The destinations a replay's endpoint sends to now, active and not paused (none once the replay is no
   * longer running): a paused one's backlog waits for its resume, which flow control paces.
   */
  async sendingDestinations(id: string): Promise<string[]> {
    const { rows } = await this.knex.raw(
      `select d.id from bulk_replays r
       join destinations d on d.endpoint_id = r.endpoint_id and d.is_active and not d.paused
       where r.id = ? and r.status = 'running'`,
      [id],
    );
    return rows.map((row: { id: string }) => row.id);
  }

  /** The running replays (oldest first), for the worker's sweep. */
  async running(): Promise<{ id: string; endpoint_id: string }[]> {
    const { rows } = await this.knex.raw(
      `select id, endpoint_id from bulk_replays where status = 'running' order by created_at limit 1000`,
    );
    return rows;
  }

  /**
   * Dispatches the next `size` events of a running replay: one new dispatch per event (as a single replay
   * makes), a pending delivery per active destination that would receive it were it captured now (its
   * filter, the endpoint's enforced verification: EventRouting), the cursor and `done` moved on, all in one
   * transaction with the replay's row locked, so that two workers never dispatch the same event. An event
   * that retention deletes meanwhile gets no delivery and counts as done (insertDispatches). The replay is
   * completed when fewer than `size` events were left.
   */
  async dispatchNext(id: string, size: number): Promise<DispatchedChunk> {
    return this.knex.transaction(async (trx) => {
      const locked = await trx.raw(
        `select r.endpoint_id, r.filter, r.created_at, r.cursor_received_at, r.cursor_event_id,
                ${ENFORCES_VERIFICATION} as enforced
         from bulk_replays r join endpoints ep on ep.id = r.endpoint_id
         where r.id = ? and r.status = 'running' for update of r`,
        [id],
      );
      const replay = locked.rows[0];
      if (!replay) return { deliveryIds: [], running: false };
      const cursor = [replay.cursor_received_at, replay.cursor_event_id];
      const where = eventFilterSql(replay.endpoint_id, eventFilters(replay.filter));
      const [chunk, destinations] = await Promise.all([
        listsEvents(replay.filter)
          ? trx.raw(LISTED_CHUNK, [id, ...cursor, size])
          : trx.raw(matchedChunk(where.sql), [
              ...where.bindings,
              replay.created_at,
              ...cursor,
              size,
            ] as never[]),
        trx.raw(
          `select id, is_active, filter from destinations where endpoint_id = ? and is_active order by id`,
          [replay.endpoint_id],
        ),
      ]);
      const events = chunk.rows as ChunkEvent[];
      const deliveryIds = await insertDispatches(
        trx,
        await this.routes(
          trx,
          events.filter((event) => !event.gone),
          destinations.rows as ActiveDestination[],
          replay.enforced,
        ),
      );
      const last = events.at(-1);
      const finished = events.length < size;
      // Completed: `done` reaches `total` even when events counted at its making were deleted before their
      // turn (retention), as a replay that lists its events counts them (done, with nothing sent).
      await trx.raw(
        `update bulk_replays
         set done = case when ? then greatest(done + ?, total) else done + ? end,
             cursor_received_at = coalesce(?::timestamptz, cursor_received_at),
             cursor_event_id = coalesce(?::uuid, cursor_event_id),
             status = case when ? then 'completed' else status end,
             finished_at = case when ? then now() else finished_at end
         where id = ?`,
        [
          finished,
          events.length,
          events.length,
          last?.received_at ?? null,
          last?.id ?? null,
          finished,
          finished,
          id,
        ],
      );
      if (finished) await trx.raw(`delete from bulk_replay_events where bulk_replay_id = ?`, [id]);
      return { deliveryIds, running: !finished };
    });
  }

  /**
   * Each event of a chunk with the destinations that receive it, under one new dispatch id per event.
   * Requests are read only when a destination has a filter, in groups of at most READ_BYTES of stored body.
   */
  private async routes(
    trx: Knex,
    events: ChunkEvent[],
    destinations: ActiveDestination[],
    enforced: boolean,
  ): Promise<{ eventId: string; destinationId: string; dispatchId: string }[]> {
    const routed = events.filter((event) => verificationBlock(event, enforced) === null);
    const receivers = new Map<string, string[]>();
    if (destinations.every((destination) => destination.filter === null)) {
      for (const event of routed)
        receivers.set(
          event.id,
          destinations.map((destination) => destination.id),
        );
    } else {
      for (const group of bySize(routed, READ_BYTES)) {
        const { rows } = await trx.raw(
          `select id, method, headers, query, body_text, body_bytes from events where id = any(?::uuid[])`,
          [group.map((event) => event.id)],
        );
        const requests = new Map((rows as (StoredRequest & { id: string })[]).map((row) => [row.id, row]));
        for (const event of group) {
          const request = requests.get(event.id);
          if (!request) continue; // deleted since (retention): nothing to send
          const routing = new EventRouting({ ...event, ...request }, enforced);
          receivers.set(
            event.id,
            destinations
              .filter((destination) => routing.reasonNotReceived(destination) === null)
              .map(({ id }) => id),
          );
        }
      }
    }
    return routed.flatMap((event) => {
      const dispatchId = randomUUID();
      return (receivers.get(event.id) ?? []).map((destinationId) => ({
        eventId: event.id,
        destinationId,
        dispatchId,
      }));
    });
  }
}

/** Consecutive groups of events whose stored bodies add up to at most `bytes` (an event alone may exceed it). */
function bySize(events: ChunkEvent[], bytes: number): ChunkEvent[][] {
  const groups: ChunkEvent[][] = [];
  let total = Infinity;
  for (const event of events) {
    if (total + event.size > bytes) {
      groups.push([]);
      total = 0;
    }
    groups.at(-1)!.push(event);
    total += event.size;
  }
  return groups;
}
