/**
 * The SQL of `event_counts` (exact event counts per endpoint and status, as signed deltas that statement
 * triggers on `events` append): made by Migration20261123030000_event_counts, dropped by
 * Migration20261205000000_event_counts_from_stats (whose `down` makes it again), in this order.
 */
export const CREATE_EVENT_COUNTS_SQL = [
  `create table "event_counts" ("endpoint_id" uuid not null, "status" text not null, "delta" bigint not null);`,
  `create index "event_counts_endpoint_status_index" on "event_counts" ("endpoint_id", "status");`,
  `create function "event_counts_apply"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into event_counts (endpoint_id, status, delta)
          select endpoint_id, status, count(*) from new_rows group by endpoint_id, status;
        elsif tg_op = 'UPDATE' then
          insert into event_counts (endpoint_id, status, delta)
          select endpoint_id, status, sum(delta) from (
            select endpoint_id, status, 1 as delta from new_rows
            union all
            select endpoint_id, status, -1 from old_rows
          ) changed group by endpoint_id, status having sum(delta) <> 0;
        else
          insert into event_counts (endpoint_id, status, delta)
          select endpoint_id, status, -count(*) from old_rows
          where exists (select 1 from endpoints where endpoints.id = old_rows.endpoint_id)
          group by endpoint_id, status;
        end if;
        return null;
      end $$;`,
  `create trigger "events_count_insert" after insert on "events" referencing new table as new_rows for each statement execute function event_counts_apply();`,
  `create trigger "events_count_update" after update on "events" referencing old table as old_rows new table as new_rows for each statement execute function event_counts_apply();`,
  `create trigger "events_count_delete" after delete on "events" referencing old table as old_rows for each statement execute function event_counts_apply();`,
  `create function "event_counts_forget_endpoint"() returns trigger language plpgsql as $$
      begin
        delete from event_counts where endpoint_id in (select id from old_endpoints);
        return null;
      end $$;`,
  `create trigger "endpoints_forget_counts" after delete on "endpoints" referencing old table as old_endpoints for each statement execute function event_counts_forget_endpoint();`,
  `insert into "event_counts" ("endpoint_id", "status", "delta") select "endpoint_id", "status", count(*) from "events" group by "endpoint_id", "status";`,
];

export const DROP_EVENT_COUNTS_SQL = [
  `drop trigger if exists "endpoints_forget_counts" on "endpoints";`,
  `drop trigger if exists "events_count_insert" on "events";`,
  `drop trigger if exists "events_count_update" on "events";`,
  `drop trigger if exists "events_count_delete" on "events";`,
  `drop function if exists "event_counts_forget_endpoint"();`,
  `drop function if exists "event_counts_apply"();`,
  `drop table if exists "event_counts";`,
];
