import { Migration } from '@mikro-orm/migrations';

/**
 * An endpoint created with ingest rules starts at `rules_version` 1. It started at 0, the version every
 * process judges an endpoint it has not read by (no rules), and only an update raised it: so the rules
 * given to `POST /api/endpoints` were not applied (inbound auth, verification, dedup) until a later change
 * of a rule or a filtered destination. Endpoints already made that way are moved to 1 too.
 */
export class Migration20261206000000_rules_version_on_insert extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create function "endpoint_rules_created"() returns trigger language plpgsql as $$
      begin
        new.rules_version := greatest(new.rules_version, 1);
        return new;
      end $$;`);
    this.addSql(`create trigger "endpoints_rules_version_insert" before insert on "endpoints"
      for each row when (
        new.verification is not null or new.inbound_auth is not null or new.dedup is not null)
      execute function "endpoint_rules_created"();`);
    this.addSql(`update endpoints set rules_version = 1 where rules_version = 0
      and (verification is not null or inbound_auth is not null or dedup is not null);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "endpoints_rules_version_insert" on "endpoints";`);
    this.addSql(`drop function "endpoint_rules_created"();`);
  }
}
