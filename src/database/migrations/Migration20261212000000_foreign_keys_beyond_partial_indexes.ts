import { Migration } from '@mikro-orm/migrations';

/**
 * Full indexes on two foreign keys that only partial indexes covered, which PostgreSQL cannot use to find
 * every referring row (test/schema.e2e-spec.ts):
 * - `issues.destination_id`: the unique index of unresolved issues left deleting a destination to scan
 *   every issue for its resolved ones; (destination_id, kind, resolved_at) also finds a destination's
 *   latest issue of a kind, resolved or not (IssueTracker's stale failures);
 * - `dead_letter_alerts.endpoint_id`: its two indexes split sent from unsent alerts, so deleting an endpoint
 *   scanned every alert.
 */
export class Migration20261212000000_foreign_keys_beyond_partial_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "issues_destination_kind_index" on "issues" ("destination_id", "kind", "resolved_at");`,
    );
    this.addSql(
      `create index "dead_letter_alerts_endpoint_id_index" on "dead_letter_alerts" ("endpoint_id");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "dead_letter_alerts_endpoint_id_index";`);
    this.addSql(`drop index "issues_destination_kind_index";`);
  }
}
