import { Migration } from '@mikro-orm/migrations';

/**
 * The trigram index for `q` leaves the capture path: it covers only the events marked `searchable`, which
 * the search indexer of a worker marks in batches shortly after their capture (SearchIndexer). New events
 * start unmarked and sit in a small btree of their own, through which `q` still finds them at once (see
 * eventFilterSql). Events stored before this migration are marked already (the column's first default).
 */
export class Migration20261124020000_search_index_off_the_capture_path extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "events" add column "searchable" boolean not null default true;`);
    this.addSql(`alter table "events" alter column "searchable" set default false;`);
    this.addSql(`drop index "events_body_text_trgm_index";`);
    this.addSql(
      `create index "events_body_text_trgm_index" on "events" using gin ("body_text" gin_trgm_ops) where "searchable";`,
    );
    this.addSql(
      `create index "events_unsearchable_index" on "events" ("endpoint_id", "received_at" desc) where not "searchable";`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "events_unsearchable_index";`);
    this.addSql(`drop index "events_body_text_trgm_index";`);
    this.addSql(`alter table "events" drop column "searchable";`);
    this.addSql(
      `create index "events_body_text_trgm_index" on "events" using gin ("body_text" gin_trgm_ops);`,
    );
  }
}
