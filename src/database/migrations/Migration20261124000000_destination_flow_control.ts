import { Migration } from '@mikro-orm/migrations';

/** Per-destination flow control: a rate limit, a cap on concurrent attempts, and pausing. */
export class Migration20261124000000_destination_flow_control extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "destinations"
      add column "rate_limit" int null check ("rate_limit" between 1 and 100000),
      add column "rate_limit_period" text not null default 'second' check ("rate_limit_period" in ('second', 'minute')),
      add column "max_in_flight" int null check ("max_in_flight" between 1 and 1000),
      add column "paused" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "destinations"
      drop column "rate_limit", drop column "rate_limit_period", drop column "max_in_flight", drop column "paused";`);
  }
}
