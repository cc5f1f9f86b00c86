import { Migration } from '@mikro-orm/migrations';

/**
 * `routing_queue` holds the events a capture stored to be forwarded, until a worker's router makes their
 * deliveries (DeliveryRouter): the capture statement writes one small row per event, with the destinations
 * it is for (those active at its capture that its filters did not skip), instead of a delivery row per
 * destination with their indexes. No index and no foreign key, as `search_queue`: the router takes rows by
 * their address, and drops those whose event is gone. Events stored before this migration have their
 * deliveries.
 */
export class Migration20261204000000_routing_queue extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "routing_queue" ("event_id" uuid not null, "destination_ids" uuid[] not null);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "routing_queue";`);
  }
}
