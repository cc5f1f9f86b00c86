import { Migration } from '@mikro-orm/migrations';

/**
 * Each event stored with a dedup key keeps it, so that PostgreSQL holds the record of the claims: a Redis
 * that lost them (restarted empty, or a replica promoted without them) is checked against it (DedupClaims).
 * The index is partial: captures without a key pay nothing for it.
 */
export class Migration20261215000000_events_dedup_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "events" add column "dedup_key" text;`);
    this.addSql(
      `create index "events_dedup_key_index" on "events" ("endpoint_id", "dedup_key", "received_at") where "dedup_key" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "events" drop column "dedup_key";`);
  }
}
