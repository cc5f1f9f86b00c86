import { Migration } from '@mikro-orm/migrations';

/**
 * `rules_version` goes up only when what a capture is judged by changes: the endpoint's verification,
 * inbound auth or dedup (a value that differs, not a column merely written again), or the filter of an
 * active destination (one added, removed, (de)activated, or its filter changed). Before, it also went up
 * when the endpoint was (de)activated and when any destination was added, removed or (de)activated, which
 * the capture statement decides by itself (it reads `is_active` and the active destinations as it stores).
 * So an endpoint with destinations and no rules kept a version above 0, and each process judged its first
 * capture by NO_RULES (version 0), found them stale, read them and committed it again: a second commit
 * inside the first capture's allowance, for a burst of first captures at once. Versions still only go up.
 */
export class Migration20261201000000_rules_version_on_rule_changes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger "endpoints_rules_version" on "endpoints";`);
    this.addSql(`create trigger "endpoints_rules_version" before update of
      "verification", "verification_secret", "inbound_auth", "inbound_auth_secret", "dedup" on "endpoints"
      for each row when (
        (old.verification, old.verification_secret, old.inbound_auth, old.inbound_auth_secret, old.dedup)
        is distinct from
        (new.verification, new.verification_secret, new.inbound_auth, new.inbound_auth_secret, new.dedup))
      execute function "endpoint_rules_changed"();`);
    this.addSql(`drop trigger "destinations_rules_version" on "destinations";`);
    this.addSql(`create trigger "destinations_rules_version_insert" after insert on "destinations"
      for each row when (new.is_active and new.filter is not null)
      execute function "destination_rules_changed"();`);
    this.addSql(`create trigger "destinations_rules_version_delete" after delete on "destinations"
      for each row when (old.is_active and old.filter is not null)
      execute function "destination_rules_changed"();`);
    this.addSql(`create trigger "destinations_rules_version_update" after update of "is_active", "filter"
      on "destinations" for each row when (
        (old.is_active and old.filter is not null or new.is_active and new.filter is not null)
        and (old.is_active, old.filter) is distinct from (new.is_active, new.filter))
      execute function "destination_rules_changed"();`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger "destinations_rules_version_update" on "destinations";`);
    this.addSql(`drop trigger "destinations_rules_version_delete" on "destinations";`);
    this.addSql(`drop trigger "destinations_rules_version_insert" on "destinations";`);
    this.addSql(`create trigger "destinations_rules_version" after insert or delete or update of
      "is_active", "filter" on "destinations" for each row execute function "destination_rules_changed"();`);
    this.addSql(`drop trigger "endpoints_rules_version" on "endpoints";`);
    this.addSql(`create trigger "endpoints_rules_version" before update of
      "is_active", "verification", "verification_secret", "inbound_auth", "inbound_auth_secret", "dedup"
      on "endpoints" for each row execute function "endpoint_rules_changed"();`);
  }
}
