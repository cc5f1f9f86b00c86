import { Migration } from '@mikro-orm/migrations';

/**
 * Dedup keys are claimed in Redis (DedupClaims), expiring with their window: the capture statement no longer
 * writes a row for each key. Claims held here when this runs are not carried over: a repeat of an event
 * captured before it, within its window, is captured again.
 */
export class Migration20261214000000_dedup_claims_in_redis extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop table "dedup_keys";`);
  }

  override async down(): Promise<void> {
    this.addSql(`create table "dedup_keys" (
      "endpoint_id" uuid not null references "endpoints" ("id") on delete cascade,
      "key" text not null,
      "event_id" uuid not null,
      "expires_at" timestamptz not null,
      primary key ("endpoint_id", "key"));`);
    this.addSql(`create index "dedup_keys_expires_at_index" on "dedup_keys" ("expires_at");`);
  }
}
