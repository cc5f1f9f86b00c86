import { Migration } from '@mikro-orm/migrations';
import { ATTEMPT_STATS_UPDATE_TRIGGER_SQL, attemptStatsApplySql } from '../attempt-stats-functions';
import { eventStatsAddSql, eventStatsApplySql } from '../event-stats-functions';

/**
 * An endpoint's statistics (README, "Statistics") kept as events and attempts happen, so that reading them
 * never scans events or deliveries:
 * - `endpoint_event_stats`: events per received bucket and current status. Statement-level triggers on
 *   `events` add what a statement changed, from its transition tables (a batch of captures is one upsert
 *   per bucket, not one per event): inserts, status changes (-1 old status, +1 new) and deletes (so that a
 *   retention job keeps the counts true).
 * - `destination_attempt_stats`: attempts per destination and bucket of the attempt, the 2xx among them
 *   and a latency histogram: `latency[i]` counts durations d with 4·log2(d + 1) in [i, i + 1) (the last
 *   cell takes everything longer), so a percentile read from it is within about 9 % of (d + 1). A trigger
 *   on `deliveries` adds the entries a statement appended to `attempts`, and takes back those of deleted
 *   deliveries.
 * Each change is added three times, to the minute, hour and day (UTC) of its bucket: minute rows serve the
 * 1h window (and are deleted after two hours), hour rows 24h and 7d, day rows 30d, so no read sums more
 * than a few hundred rows. Concurrent writers (the capture lanes, the delivery worker's batches) would
 * queue on one hot row per endpoint and minute: rows are spread over 8 shards by the writing backend
 * (pg_backend_pid() % 8, summed when read, folded into shard 0 by the worker once their bucket is past),
 * and upserted in key order so that two writers never deadlock. Rows of deleted endpoints and destinations
 * are deleted with them (no foreign key: the cascade deleting their events would then fail).
 */
export class Migration20261125020000_endpoint_stats extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "endpoint_event_stats" (
      "endpoint_id" uuid not null,
      "span" text not null check ("span" in ('minute', 'hour', 'day')),
      "bucket_start" timestamptz not null,
      "shard" smallint not null,
      "received" integer not null default 0,
      "delivered" integer not null default 0,
      "failed" integer not null default 0,
      "dead_letter" integer not null default 0,
      primary key ("endpoint_id", "span", "bucket_start", "shard"));`);
    this.addSql(`create table "destination_attempt_stats" (
      "destination_id" uuid not null,
      "span" text not null check ("span" in ('minute', 'hour', 'day')),
      "bucket_start" timestamptz not null,
      "shard" smallint not null,
      "attempts" integer not null default 0,
      "successes" integer not null default 0,
      "latency" integer[] not null,
      primary key ("destination_id", "span", "bucket_start", "shard"));`);

    // The latency histogram: its cell for a duration, the sum of two, and a dense one from sparse cells.
    this.addSql(`create function "stats_latency_cell"(duration_ms integer) returns integer
      language sql immutable parallel safe as $$
        select least(71, floor(4 * log(2, greatest(duration_ms, 0) + 1)))::integer $$;`);
    this.addSql(`create function "stats_histogram_add"(a integer[], b integer[]) returns integer[]
      language sql immutable parallel safe as $$
        select coalesce(array_agg(coalesce(x, 0) + coalesce(y, 0) order by i), '{}')
        from unnest(a, b) with ordinality as t(x, y, i) $$;`);
    this.addSql(`create aggregate "stats_histogram_sum"(integer[]) (
      sfunc = stats_histogram_add, stype = integer[], initcond = '{}');`);
    this.addSql(`create function "stats_histogram_of"(cells integer[], counts integer[]) returns integer[]
      language sql immutable parallel safe as $$
        select array_agg(coalesce(c.n, 0) order by g)
        from generate_series(0, 71) as g
        left join (select cell, sum(n)::integer as n from unnest(cells, counts) as u(cell, n) group by cell) c
          on c.cell = g $$;`);

    // Adds per-minute event deltas to the minute, hour and day rows of this backend's shard.
    this.addSql(eventStatsAddSql(null));
    this.addSql(eventStatsApplySql(null));
    this.addSql(
      `create trigger "events_stats_insert" after insert on "events" referencing new table as new_rows for each statement execute function endpoint_event_stats_apply();`,
    );
    this.addSql(
      `create trigger "events_stats_update" after update on "events" referencing old table as old_rows new table as new_rows for each statement execute function endpoint_event_stats_apply();`,
    );
    this.addSql(
      `create trigger "events_stats_delete" after delete on "events" referencing old table as old_rows for each statement execute function endpoint_event_stats_apply();`,
    );

    // Attempts: the entries a statement appended to deliveries' `attempts` (+1), or those of deleted ones (-1).
    this.addSql(attemptStatsApplySql(true));
    this.addSql(ATTEMPT_STATS_UPDATE_TRIGGER_SQL);
    this.addSql(
      `create trigger "deliveries_stats_delete" after delete on "deliveries" referencing old table as old_rows for each statement execute function destination_attempt_stats_apply();`,
    );

    this.addSql(`create function "endpoint_stats_forget"() returns trigger language plpgsql as $$
      begin
        if tg_table_name = 'endpoints' then
          delete from endpoint_event_stats where endpoint_id in (select id from old_rows);
        else
          delete from destination_attempt_stats where destination_id in (select id from old_rows);
        end if;
        return null;
      end $$;`);
    this.addSql(
      `create trigger "endpoints_forget_stats" after delete on "endpoints" referencing old table as old_rows for each statement execute function endpoint_stats_forget();`,
    );
    this.addSql(
      `create trigger "destinations_forget_stats" after delete on "destinations" referencing old table as old_rows for each statement execute function endpoint_stats_forget();`,
    );

    // What was there before the triggers: counted once, into shard 0.
    this.addSql(`insert into endpoint_event_stats
        (endpoint_id, span, bucket_start, shard, received, delivered, failed, dead_letter)
      select endpoint_id, spans.span, date_trunc(spans.span, received_at, 'UTC'), 0,
             count(*) filter (where status = 'received'), count(*) filter (where status = 'delivered'),
             count(*) filter (where status = 'failed'), count(*) filter (where status = 'dead_letter')
      from events cross join (values ('minute'), ('hour'), ('day')) as spans(span)
      where spans.span <> 'minute' or received_at >= now() - interval '2 hours'
      group by 1, 2, 3;`);
    this.addSql(`with attempts as (
        select d.destination_id, (e.entry ->> 'at')::timestamptz as at,
               (e.entry ->> 'duration_ms')::integer as duration_ms, (e.entry ->> 'response_code')::integer as response_code
        from deliveries d cross join lateral jsonb_array_elements(d.attempts) as e(entry)
        where d.destination_id is not null),
      cells as (
        select destination_id, spans.span, date_trunc(spans.span, at, 'UTC') as bucket_start,
               stats_latency_cell(duration_ms) as cell, count(*)::integer as attempts,
               count(*) filter (where response_code between 200 and 299)::integer as successes
        from attempts cross join (values ('minute'), ('hour'), ('day')) as spans(span)
        where spans.span <> 'minute' or at >= now() - interval '2 hours'
        group by 1, 2, 3, 4)
      insert into destination_attempt_stats (destination_id, span, bucket_start, shard, attempts, successes, latency)
      select destination_id, span, bucket_start, 0, sum(attempts), sum(successes),
             stats_histogram_of(array_agg(cell), array_agg(attempts))
      from cells group by 1, 2, 3;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "destinations_forget_stats" on "destinations";`);
    this.addSql(`drop trigger if exists "endpoints_forget_stats" on "endpoints";`);
    this.addSql(`drop trigger if exists "deliveries_stats_delete" on "deliveries";`);
    this.addSql(`drop trigger if exists "deliveries_stats_update" on "deliveries";`);
    this.addSql(`drop trigger if exists "events_stats_delete" on "events";`);
    this.addSql(`drop trigger if exists "events_stats_update" on "events";`);
    this.addSql(`drop trigger if exists "events_stats_insert" on "events";`);
    this.addSql(`drop function if exists "endpoint_stats_forget"();`);
    this.addSql(`drop function if exists "destination_attempt_stats_apply"();`);
    this.addSql(`drop function if exists "endpoint_event_stats_apply"();`);
    this.addSql(
      `drop function if exists "endpoint_event_stats_add"(uuid[], timestamptz[], integer[], integer[], integer[], integer[]);`,
    );
    this.addSql(`drop function if exists "stats_histogram_of"(integer[], integer[]);`);
    this.addSql(`drop aggregate if exists "stats_histogram_sum"(integer[]);`);
    this.addSql(`drop function if exists "stats_histogram_add"(integer[], integer[]);`);
    this.addSql(`drop function if exists "stats_latency_cell"(integer);`);
    this.addSql(`drop table if exists "destination_attempt_stats";`);
    this.addSql(`drop table if exists "endpoint_event_stats";`);
  }
}
