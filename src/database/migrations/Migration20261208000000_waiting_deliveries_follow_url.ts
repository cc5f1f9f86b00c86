import { Migration } from '@mikro-orm/migrations';

/**
 * A destination's new URL is written on its waiting deliveries (`pending`, or `failed` and owed a retry),
 * in the transaction that changes it: their next attempts go to it (the worker sends to the destination as
 * it is now), so the delivery's `destination_url`, "the URL the delivery was made to", shows it too. Those
 * already delivered or dead-lettered keep the URL they were sent to.
 */
export class Migration20261208000000_waiting_deliveries_follow_url extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function "destination_url_changed"() returns trigger language plpgsql as $$
      begin
        update deliveries set destination_url = new.url
        where destination_id = new.id and status in ('pending', 'failed');
        return null;
      end $$;`);
    this.addSql(`create trigger "destinations_url_to_waiting_deliveries"
      after update of "url" on "destinations" for each row when (old.url is distinct from new.url)
      execute function "destination_url_changed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "destinations_url_to_waiting_deliveries" on "destinations";`);
    this.addSql(`drop function "destination_url_changed"();`);
  }
}
