import type { Knex } from '../database/sql';

/** An endpoint with more delta rows than this has them folded (see the event_counts migration). */
export const EVENT_COUNTS_FOLD_AT = 200;

/**
 * Folds the delta rows of the endpoints with more than `threshold` of them (or of one endpoint) into one
 * row per status, in one statement: the rows it deletes are summed back, so a delta appended meanwhile by
 * a concurrent statement is never lost, and two folds at once cannot count a row twice.
 */
export async function foldEventCounts(knex: Knex, threshold: number, endpointId?: string): Promise<void> {
  await knex.raw(
    `with folded as (
       delete from event_counts where endpoint_id in (
         select endpoint_id from event_counts where ?::uuid is null or endpoint_id = ?
         group by endpoint_id having count(*) > ?)
       returning endpoint_id, status, delta)
     insert into event_counts (endpoint_id, status, delta)
     select endpoint_id, status, sum(delta) from folded group by endpoint_id, status having sum(delta) <> 0`,
    [endpointId ?? null, endpointId ?? null, threshold],
  );
}

/** The exact number of an endpoint's events (of one status), from the deltas; folds them when many. */
export async function countEvents(knex: Knex, endpointId: string, status?: string): Promise<number> {
  const { rows } = await knex.raw(
    `select coalesce(sum(delta), 0)::bigint as total, count(*)::int as deltas
     from event_counts where endpoint_id = ?${status === undefined ? '' : ' and status = ?'}`,
    status === undefined ? [endpointId] : [endpointId, status],
  );
  const [{ total, deltas }] = rows as { total: string; deltas: number }[];
  if (deltas > EVENT_COUNTS_FOLD_AT) {
    // Best effort, after the answer: the next read sums fewer rows.
    foldEventCounts(knex, EVENT_COUNTS_FOLD_AT, endpointId).catch(() => undefined);
  }
  return Number(total);
}
