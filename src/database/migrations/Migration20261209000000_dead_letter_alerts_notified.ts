import { Migration } from '@mikro-orm/migrations';

/**
 * When an alert's dead letter was told to the notification channels, apart from when it was mailed: SMTP
 * down (or misconfigured) delays the mail, and no longer the channels' `dead_letter` notifications.
 */
export class Migration20261209000000_dead_letter_alerts_notified extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "dead_letter_alerts" add column "notified_at" timestamptz null;`);
    this.addSql(`update "dead_letter_alerts" set "notified_at" = "sent_at" where "sent_at" is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "dead_letter_alerts" drop column "notified_at";`);
  }
}
