import { Migration } from '@mikro-orm/migrations';

/**
 * An event keeps the dedup key it claimed, so that claims lost with Redis (a restart, a failover to a
 * replica that lagged) are found again in PostgreSQL (CaptureWriter). The index is partial: only the events
 * of endpoints with dedup are in it, so the other captures pay nothing for it.
 */
export class Migration20261215020000_event_dedup_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "events" add column "dedup_key" text null;`);
    this.addSql(
      `create index "events_dedup_key_index" on "events" ("endpoint_id", "dedup_key", "received_at" desc) where "dedup_key" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "events_dedup_key_index";`);
    this.addSql(`alter table "events" drop column "dedup_key";`);
  }
}
