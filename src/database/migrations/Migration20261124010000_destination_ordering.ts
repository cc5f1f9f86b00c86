import { Migration } from '@mikro-orm/migrations';

/** FIFO delivery per destination: `ordering` is `none` (default) or `fifo`. */
export class Migration20261124010000_destination_ordering extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "destinations"
      add column "ordering" text not null default 'none' check ("ordering" in ('none', 'fifo'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "destinations" drop column "ordering";`);
  }
}
