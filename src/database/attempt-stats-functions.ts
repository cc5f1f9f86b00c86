/**
 * The SQL of `destination_attempt_stats_apply`, the statement trigger function that keeps
 * `destination_attempt_stats` (see Migration20261125020000_endpoint_stats) from the `attempts` arrays of
 * `deliveries`: on delete it takes the attempts of the deleted deliveries back out; in its first version it
 * also added the entries an update appended. Shared by the migration that made it and the one that moved
 * the adding to the delivery worker (Migration20261128000000_attempt_stats_from_the_worker).
 */
const attemptDeltas = (rows: string, shard: string) => `
      with attempts as (${rows}),
      cells as (
        select a.destination_id, spans.span, date_trunc(spans.span, a.at, 'UTC') as bucket_start,
               stats_latency_cell(a.duration_ms) as cell, sum(a.delta)::integer as attempts,
               sum(a.delta) filter (where a.response_code between 200 and 299)::integer as successes
        from attempts a cross join (values ('minute'), ('hour'), ('day')) as spans(span)
        group by 1, 2, 3, 4)
      insert into destination_attempt_stats as s
        (destination_id, span, bucket_start, shard, attempts, successes, latency)
      select destination_id, span, bucket_start, ${shard}, sum(attempts),
             coalesce(sum(successes), 0), stats_histogram_of(array_agg(cell), array_agg(attempts))
      from cells group by 1, 2, 3
      order by 1, 2, 3
      on conflict (destination_id, span, bucket_start, shard) do update set
        attempts = s.attempts + excluded.attempts, successes = s.successes + excluded.successes,
        latency = stats_histogram_add(s.latency, excluded.latency)`;

const entry = (delta: string) => `
      ${delta} as delta, (e.entry ->> 'at')::timestamptz as at, (e.entry ->> 'duration_ms')::integer as duration_ms,
      (e.entry ->> 'response_code')::integer as response_code`;

/** The shard a writer took before Migration20261130000000_attempt_stats_free_shard: its backend's own. */
const ATTEMPT_SHARD_BY_WRITER = 'pg_backend_pid() % 8';
/** A shard that no other transaction holds (`stats_free_shard`), as the delivery worker's attempts take. */
export const FREE_ATTEMPT_SHARD = `stats_free_shard('destination_attempt_stats', 0)`;

const deletedAttempts = (shard: string) =>
  attemptDeltas(
    `
            select o.destination_id, ${entry('-1')}
            from old_rows o cross join lateral jsonb_array_elements(o.attempts) as e(entry)
            where exists (select 1 from destinations where destinations.id = o.destination_id)`,
    shard,
  );

const appendedAttempts = attemptDeltas(
  `
            select n.destination_id, ${entry('1')}
            from new_rows n join old_rows o on o.id = n.id
            cross join lateral jsonb_array_elements(n.attempts) with ordinality as e(entry, position)
            where n.destination_id is not null
              and jsonb_array_length(n.attempts) > jsonb_array_length(o.attempts)
              and e.position > jsonb_array_length(o.attempts)`,
  ATTEMPT_SHARD_BY_WRITER,
);

/**
 * The function; `onUpdate`: it also adds what updates appended (its first version); `shard`: the shard
 * deletes write (the backend's own before Migration20261130000000_attempt_stats_free_shard).
 */
export const attemptStatsApplySql = (onUpdate: boolean, shard = ATTEMPT_SHARD_BY_WRITER): string =>
  `create or replace function "destination_attempt_stats_apply"() returns trigger language plpgsql as $$
      begin
        ${onUpdate ? `if tg_op = 'UPDATE' then ${appendedAttempts}; else ${deletedAttempts(shard)}; end if;` : `${deletedAttempts(shard)};`}
        return null;
      end $$;`;

export const ATTEMPT_STATS_UPDATE_TRIGGER_SQL = `create trigger "deliveries_stats_update" after update on "deliveries" referencing old table as old_rows new table as new_rows for each statement execute function destination_attempt_stats_apply();`;
