import { Migration } from '@mikro-orm/migrations';

/**
 * Ingest rules (README, "Ingest rules"): an endpoint's verification, inbound auth and dedup, each a jsonb
 * object with its secret apart in a sealed text column; a destination's filter; each event's verification
 * result and repeat count; and the dedup keys, unique per endpoint, which several capture processes claim
 * at once. `rules_version` goes up with every change a capture is judged by (the endpoint's rules and
 * activity, or any destination of it added, removed, (de)activated or re-filtered); the capture statement
 * stores nothing judged by an older version, so a process's cached rules are never applied once stale.
 * `event_repeats` takes the repeats of events stored by earlier statements (appended, never locking the
 * event) until a worker adds them to `duplicate_count`; reads count them meanwhile.
 */
export class Migration20261124030000_ingest_rules extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "endpoints"
      add column "verification" jsonb null,
      add column "verification_secret" text null,
      add column "inbound_auth" jsonb null,
      add column "inbound_auth_secret" text null,
      add column "dedup" jsonb null,
      add column "rules_version" integer not null default 0;`);
    this.addSql(`alter table "destinations" add column "filter" jsonb null;`);
    this.addSql(`alter table "events"
      add column "verification_status" text not null default 'none',
      add column "verification_reason" text null,
      add column "duplicate_count" integer not null default 0;`);
    this.addSql(
      `create index "events_verification_failed_index" on "events" ("endpoint_id", "received_at" desc) where "verification_status" = 'failed';`,
    );
    this.addSql(`create table "dedup_keys" (
      "endpoint_id" uuid not null references "endpoints" ("id") on delete cascade,
      "key" text not null,
      "event_id" uuid not null,
      "expires_at" timestamptz not null,
      primary key ("endpoint_id", "key"));`);
    this.addSql(`create index "dedup_keys_expires_at_index" on "dedup_keys" ("expires_at");`);
    this.addSql(`create table "event_repeats" ("event_id" uuid not null, "repeats" integer not null);`);
    this.addSql(`create index "event_repeats_event_id_index" on "event_repeats" ("event_id");`);
    this.addSql(`create function "endpoint_rules_changed"() returns trigger language plpgsql as $$
      begin
        new.rules_version := old.rules_version + 1;
        return new;
      end $$;`);
    this.addSql(`create trigger "endpoints_rules_version" before update of
      "is_active", "verification", "verification_secret", "inbound_auth", "inbound_auth_secret", "dedup"
      on "endpoints" for each row execute function "endpoint_rules_changed"();`);
    this.addSql(`create function "destination_rules_changed"() returns trigger language plpgsql as $$
      begin
        update endpoints set rules_version = rules_version + 1
        where id = case when tg_op = 'DELETE' then old.endpoint_id else new.endpoint_id end;
        return null;
      end $$;`);
    this.addSql(`create trigger "destinations_rules_version" after insert or delete or update of
      "is_active", "filter" on "destinations" for each row execute function "destination_rules_changed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "destinations_rules_version" on "destinations";`);
    this.addSql(`drop function "destination_rules_changed"();`);
    this.addSql(`drop trigger "endpoints_rules_version" on "endpoints";`);
    this.addSql(`drop function "endpoint_rules_changed"();`);
    this.addSql(`drop table "event_repeats";`);
    this.addSql(`drop table "dedup_keys";`);
    this.addSql(`drop index "events_verification_failed_index";`);
    this.addSql(`alter table "events"
      drop column "verification_status", drop column "verification_reason", drop column "duplicate_count";`);
    this.addSql(`alter table "destinations" drop column "filter";`);
    this.addSql(`alter table "endpoints"
      drop column "verification", drop column "verification_secret", drop column "inbound_auth",
      drop column "inbound_auth_secret", drop column "dedup", drop column "rules_version";`);
  }
}
