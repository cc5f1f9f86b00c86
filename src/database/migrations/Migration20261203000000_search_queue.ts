import { Migration } from '@mikro-orm/migrations';

/**
 * `search_queue` holds the events a capture stored without a delivery, for the search indexer to mark
 * `searchable` (SearchIndexer), so that its pass no longer looks for deliveries of every fresh event. No
 * foreign key: a row whose event is gone by then (retention, a deleted endpoint) is dropped by the pass
 * that takes it. Unmarked events stored before this migration are marked by the indexer's sweep of events
 * older than a minute.
 */
export class Migration20261203000000_search_queue extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "search_queue" ("event_id" uuid not null);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "search_queue";`);
  }
}
