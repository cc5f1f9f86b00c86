import { Migration } from '@mikro-orm/migrations';

/**
 * Issues (README, "Issues and auto-pause"): a destination's failed attempts grouped by kind. At most one
 * unresolved (open or acknowledged) issue per destination and kind, held by a partial unique index, so
 * that workers recording failures of the same kind at once count them into one issue (an upsert on it)
 * rather than open two. And auto-pause: a destination's consecutive failed attempts, counted as they are
 * recorded, pause it once they reach its `auto_pause_after`; `paused_reason` says so (null when paused by
 * hand).
 */
export class Migration20261125000000_issues_auto_pause extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "issues" (
      "id" uuid not null default gen_random_uuid() primary key,
      "endpoint_id" uuid not null references "endpoints" ("id") on delete cascade,
      "destination_id" uuid not null references "destinations" ("id") on delete cascade,
      "kind" text not null check ("kind" in ('http_4xx', 'http_5xx', 'timeout', 'connection', 'tls', 'dns', 'refused_address')),
      "summary" text not null,
      "status" text not null default 'open' check ("status" in ('open', 'acknowledged', 'resolved')),
      "failure_count" integer not null check ("failure_count" > 0),
      "first_seen_at" timestamptz not null,
      "last_seen_at" timestamptz not null,
      "last_event_id" uuid null,
      "resolved_at" timestamptz null);`);
    this.addSql(`create unique index "issues_unresolved_per_kind" on "issues" ("destination_id", "kind")
      where "status" <> 'resolved';`);
    this.addSql(
      `create index "issues_endpoint_last_seen_index" on "issues" ("endpoint_id", "last_seen_at" desc);`,
    );
    this.addSql(`alter table "destinations"
      add column "auto_pause_after" integer null check ("auto_pause_after" between 1 and 10000),
      add column "paused_reason" text null,
      add column "consecutive_failures" integer not null default 0;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "destinations"
      drop column "auto_pause_after", drop column "paused_reason", drop column "consecutive_failures";`);
    this.addSql(`drop table "issues";`);
  }
}
