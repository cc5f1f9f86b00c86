import { Migration } from '@mikro-orm/migrations';

/**
 * Bulk replays: a filter over an endpoint's events, replayed oldest first in chunks. The cursor (the last
 * event dispatched) moves in the same transaction as the chunk's deliveries are inserted, so a worker that
 * dies mid-replay is taken over without dispatching an event twice or skipping one.
 */
export class Migration20261123050000_bulk_replays extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "bulk_replays" (
      "id" uuid primary key,
      "endpoint_id" uuid not null references "endpoints" ("id") on delete cascade,
      "status" text not null check ("status" in ('running', 'completed', 'cancelled')),
      "filter" jsonb not null,
      "total" integer not null,
      "done" integer not null default 0,
      "cursor_received_at" timestamptz null,
      "cursor_event_id" uuid null,
      "created_at" timestamptz not null default now(),
      "finished_at" timestamptz null
    );`);
    this.addSql(
      `create index "bulk_replays_endpoint_created_index" on "bulk_replays" ("endpoint_id", "created_at" desc);`,
    );
    this.addSql(
      `create index "bulk_replays_running_index" on "bulk_replays" ("created_at") where "status" = 'running';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "bulk_replays";`);
  }
}
