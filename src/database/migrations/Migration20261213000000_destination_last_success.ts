import { Migration } from '@mikro-orm/migrations';

/**
 * When each destination's latest recorded success started (IssueTracker, moved on at most once a second): a
 * failure that started before it is stale, and neither opens an issue nor counts toward auto-pause.
 */
export class Migration20261213000000_destination_last_success extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "destinations" add column "last_success_at" timestamptz null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "destinations" drop column "last_success_at";`);
  }
}
