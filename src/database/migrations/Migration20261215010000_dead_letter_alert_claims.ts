import { Migration } from '@mikro-orm/migrations';

/**
 * Dead-letter alerts are claimed for a mail, and no longer mailed inside their lock's transaction: `mail_id`
 * names the mail that covers an alert (its Message-ID), `claimed_until` ends the claim of the worker sending
 * it, after which (the worker died) another worker sends the same mail again, with the same Message-ID.
 */
export class Migration20261215010000_dead_letter_alert_claims extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "dead_letter_alerts" add column "mail_id" uuid null, add column "claimed_until" timestamptz null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "dead_letter_alerts" drop column "mail_id", drop column "claimed_until";`);
  }
}
