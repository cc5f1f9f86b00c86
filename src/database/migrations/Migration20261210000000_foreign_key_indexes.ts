import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes on the two foreign keys whose columns had none, so that deleting the rows they refer to does
 * not scan the referring table for each row deleted (test/schema.e2e-spec.ts checks every foreign key):
 * - `dead_letter_alerts.event_id` (cascading from `events`): every event deleted, by retention or with its
 *   endpoint, scanned the whole table of alerts, which only grows (dead letters are kept, and their alerts);
 * - `team_invitations.invited_by` (set null when the inviter's account is deleted).
 */
export class Migration20261210000000_foreign_key_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "dead_letter_alerts_event_id_index" on "dead_letter_alerts" ("event_id");`);
    this.addSql(`create index "team_invitations_invited_by_index" on "team_invitations" ("invited_by");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "team_invitations_invited_by_index";`);
    this.addSql(`drop index "dead_letter_alerts_event_id_index";`);
  }
}
