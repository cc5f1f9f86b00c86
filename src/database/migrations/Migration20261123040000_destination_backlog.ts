import { Migration } from '@mikro-orm/migrations';

/** A destination's backlog (its waiting deliveries) read without visiting the deliveries it has made. */
export class Migration20261123040000_destination_backlog extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "deliveries_destination_waiting_index" on "deliveries" ("destination_id", "created_at") where "status" in ('pending', 'failed');`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "deliveries_destination_waiting_index";`);
  }
}
