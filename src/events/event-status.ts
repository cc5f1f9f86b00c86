import { type PreparedStatement, runPrepared, type Sql } from '../database/sql';
import type { EventStatus } from '../model/event.entity';

export interface LockedEvent {
  status: EventStatus;
  endpointId: string;
}

/**
 * The events' statuses from their deliveries (spec §3): delivered once any delivery succeeded; otherwise
 * failed while any is still in progress after an attempt was made, received before any attempt;
 * dead_letter once every delivery is exhausted. Only events whose status changes are written. Since
 * their row is rewritten anyway, they go into the search index in the same write (`searchable`), and the
 * SearchIndexer leaves events with deliveries to it: a row indexed before its status write would get its
 * body's trigrams into the index twice.
 *
 * Each event's deliveries are read through the deliveries' event index, one event at a time (a lateral
 * join), whatever the planner believes of the table: with `event_id = any(...)` it chose a sequential scan
 * of every delivery whenever the table had no statistics yet (a new database, a table that just grew), at
 * 50 ms a batch of 100 in the delivery benchmark.
 */
export const REFRESH: PreparedStatement = {
  name: 'hooktrail-refresh-event-statuses',
  text: `
  with fresh as (
    select ids.event_id, case
        when delivered then 'delivered'
        when in_progress and attempted then 'failed'
        when in_progress then 'received'
        when dead then 'dead_letter'
        else 'received' end as status
    from unnest(?::uuid[]) as ids(event_id)
    cross join lateral (
      select count(*) as deliveries,
             bool_or(status = 'delivered') as delivered,
             bool_or(status in ('pending', 'failed')) as in_progress,
             bool_or(attempt_count > 0) as attempted,
             bool_or(status = 'dead_letter') as dead
      from deliveries where deliveries.event_id = ids.event_id
    ) agg
    where agg.deliveries > 0
  )
  update events set status = fresh.status, searchable = true
  from fresh where events.id = fresh.event_id and events.status <> fresh.status
  returning events.id, events.status`,
};

const LOCK_EVENTS: PreparedStatement = {
  name: 'hooktrail-lock-events',
  text: `select id, status, endpoint_id from events where id = any(?::uuid[]) order by id for update`,
};

/**
 * Locks the events' rows in id order (the order every writer of event statuses takes them, so that two
 * never deadlock) and reads their status and endpoint as they were before the change.
 */
export async function lockEvents(trx: Sql, ids: readonly string[]): Promise<Map<string, LockedEvent>> {
  const { rows } = await runPrepared<{ rows: { id: string; status: EventStatus; endpoint_id: string }[] }>(
    trx,
    LOCK_EVENTS,
    [[...ids].sort()],
  );
  return new Map(rows.map((row) => [row.id, { status: row.status, endpointId: row.endpoint_id }]));
}

/** Sets the events' statuses from their deliveries' (after those changed); answers those that changed. */
export async function refreshEventStatuses(
  trx: Sql,
  ids: readonly string[],
): Promise<Map<string, EventStatus>> {
  if (ids.length === 0) return new Map();
  const { rows } = await runPrepared<{ rows: { id: string; status: EventStatus }[] }>(trx, REFRESH, [
    [...ids],
  ]);
  return new Map(rows.map((row) => [row.id, row.status]));
}
