import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from '@mikro-orm/postgresql';
import { type EventFilters, eventFilterSql } from '../../events/events.repository';
import { isoColumn as iso } from '../../database/iso-column';

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
 * Bulk replays and their dispatch. A replay covers the events that matched its filter when it was made
 * (received before its created_at), oldest first; its cursor is the last event dispatched.
 */
@Injectable()
export class BulkReplayRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return this.em.getKnex();
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
      const { rows } = await trx.raw(
        `insert into bulk_replays (id, endpoint_id, status, filter, total)
         select ?, ?, 'running', ?::jsonb, count(*)::int from events where ${where.sql} and received_at <= now()
         returning ${COLUMNS}`,
        [id, endpointId, JSON.stringify(filter), ...where.bindings] as never[],
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
      `update bulk_replays set status = 'cancelled', finished_at = now()
       where id = ? and endpoint_id = ? and status = 'running'`,
      [id, endpointId],
    );
    return this.find(endpointId, id);
  }

  /** The active destinations of a replay's endpoint (none once it is no longer running). */
  async activeDestinations(id: string): Promise<string[]> {
    const { rows } = await this.knex.raw(
      `select d.id from bulk_replays r join destinations d on d.endpoint_id = r.endpoint_id and d.is_active
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
   * makes), a pending delivery per active destination, the cursor and `done` moved on, all in one
   * transaction with the replay's row locked, so that two workers never dispatch the same event. The
   * replay is completed when fewer than `size` events were left.
   */
  async dispatchNext(id: string, size: number): Promise<DispatchedChunk> {
    return this.knex.transaction(async (trx) => {
      const locked = await trx.raw(
        `select endpoint_id, filter, created_at, cursor_received_at, cursor_event_id
         from bulk_replays where id = ? and status = 'running' for update`,
        [id],
      );
      const replay = locked.rows[0];
      if (!replay) return { deliveryIds: [], running: false };
      const where = eventFilterSql(replay.endpoint_id, eventFilters(replay.filter));
      const after =
        replay.cursor_event_id === null ? 'true' : '(received_at, id) > (?::timestamptz, ?::uuid)';
      const afterBindings =
        replay.cursor_event_id === null ? [] : [replay.cursor_received_at, replay.cursor_event_id];
      const { rows } = await trx.raw(
        `with chunk as materialized (
           select id, received_at, gen_random_uuid() as dispatch_id from events
           where ${where.sql} and received_at <= ?::timestamptz and ${after}
           order by received_at, id limit ?
         ), inserted as (
           insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, next_attempt_at)
           select gen_random_uuid(), chunk.id, d.id, d.url, chunk.dispatch_id, 'pending', now()
           from chunk join destinations d on d.endpoint_id = ? and d.is_active
           returning id
         ), last as (
           select id, received_at from chunk order by received_at desc, id desc limit 1
         )
         select (select count(*)::int from chunk) as events,
                (select array_agg(id) from inserted) as delivery_ids,
                (select received_at from last) as last_received_at,
                (select id from last) as last_event_id`,
        [...where.bindings, replay.created_at, ...afterBindings, size, replay.endpoint_id] as never[],
      );
      const chunk = rows[0] as {
        events: number;
        delivery_ids: string[] | null;
        last_received_at: string | null;
        last_event_id: string | null;
      };
      const finished = chunk.events < size;
      await trx.raw(
        `update bulk_replays
         set done = done + ?,
             cursor_received_at = coalesce(?::timestamptz, cursor_received_at),
             cursor_event_id = coalesce(?::uuid, cursor_event_id),
             status = case when ? then 'completed' else status end,
             finished_at = case when ? then now() else finished_at end
         where id = ?`,
        [chunk.events, chunk.last_received_at, chunk.last_event_id, finished, finished, id],
      );
      return { deliveryIds: chunk.delivery_ids ?? [], running: !finished };
    });
  }
}
