import type { Knex } from '../database/sql';

/**
 * Deletes the events of `ids` that no delivery made at or after `since` keeps (a replay since), with
 * their deliveries, AI results and alerts (their foreign keys' cascade), in the caller's transaction;
 * answers how many were deleted. Retention's batches call it, with a fresh look at the deliveries: a
 * replay committed after they chose the events keeps its event.
 */
export async function deleteEventsNotReplayedSince(trx: Knex, ids: string[], since: string): Promise<number> {
  const deleted = await trx.raw(
    `delete from events e where e.id = any(?::uuid[])
       and not exists (select 1 from deliveries dl where dl.event_id = e.id and dl.created_at >= ?::timestamptz)`,
    [ids, since],
  );
  return deleted.rowCount as number;
}
