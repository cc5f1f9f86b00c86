import { Migration } from '@mikro-orm/migrations';

/**
 * The events a bulk replay filtered by status covers, as they matched when it was made: an event's status
 * moves on while a long replay waits (a retry delivers it, another dead-letters it), so testing it again at
 * each chunk would pass over events that matched and take in events that did not. Events deleted
 * meanwhile (retention) are passed over when their turn comes.
 */
export class Migration20261207000000_bulk_replay_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "bulk_replay_events" (
      "bulk_replay_id" uuid not null references "bulk_replays" ("id") on delete cascade,
      "received_at" timestamptz not null,
      "event_id" uuid not null,
      primary key ("bulk_replay_id", "received_at", "event_id")
    );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "bulk_replay_events";`);
  }
}
