import { Migration } from '@mikro-orm/migrations';

/**
 * Exact event counts per endpoint and status without counting a million rows: statement-level triggers
 * on `events` append one signed delta per (endpoint, status) a statement changed (from its transition
 * tables, so a batch of captures adds one row, not one per event), and readers sum an endpoint's rows.
 * Appending never waits on another writer; the rows of an endpoint are folded into one per status from
 * time to time (delete ... returning, then insert the sums, in one statement). Deltas of an endpoint that
 * is being deleted are not written: its rows go with it.
 */
export class Migration20261123030000_event_counts extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "event_counts" ("endpoint_id" uuid not null, "status" text not null, "delta" bigint not null);`,
    );
    this.addSql(
      `create index "event_counts_endpoint_status_index" on "event_counts" ("endpoint_id", "status");`,
    );
    this.addSql(`create function "event_counts_apply"() returns trigger language plpgsql as $$
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
      end $$;`);
    this.addSql(
      `create trigger "events_count_insert" after insert on "events" referencing new table as new_rows for each statement execute function event_counts_apply();`,
    );
    this.addSql(
      `create trigger "events_count_update" after update on "events" referencing old table as old_rows new table as new_rows for each statement execute function event_counts_apply();`,
    );
    this.addSql(
      `create trigger "events_count_delete" after delete on "events" referencing old table as old_rows for each statement execute function event_counts_apply();`,
    );
    this.addSql(`create function "event_counts_forget_endpoint"() returns trigger language plpgsql as $$
      begin
        delete from event_counts where endpoint_id in (select id from old_endpoints);
        return null;
      end $$;`);
    this.addSql(
      `create trigger "endpoints_forget_counts" after delete on "endpoints" referencing old table as old_endpoints for each statement execute function event_counts_forget_endpoint();`,
    );
    this.addSql(
      `insert into "event_counts" ("endpoint_id", "status", "delta") select "endpoint_id", "status", count(*) from "events" group by "endpoint_id", "status";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "endpoints_forget_counts" on "endpoints";`);
    this.addSql(`drop trigger if exists "events_count_insert" on "events";`);
    this.addSql(`drop trigger if exists "events_count_update" on "events";`);
    this.addSql(`drop trigger if exists "events_count_delete" on "events";`);
    this.addSql(`drop function if exists "event_counts_forget_endpoint"();`);
    this.addSql(`drop function if exists "event_counts_apply"();`);
    this.addSql(`drop table if exists "event_counts";`);
  }
}
