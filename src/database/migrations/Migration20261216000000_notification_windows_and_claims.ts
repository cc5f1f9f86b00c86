import { Migration } from '@mikro-orm/migrations';

/**
 * Notifications on time (design.md, "Notifications: timing"): the digest window is kept per channel and
 * per kind of notification (`notification_windows`, the time the last message of that kind left), no
 * longer per channel, so a dead letter does not wait behind an `issue.opened`. Messages are claimed and no
 * longer sent inside their lock's transaction: `message_id` names the message an outbox row went into
 * (its `hooktrail-id`, or its Message-ID), `attempts` counts its sends that failed, `claimed_by` names the
 * job sending it (or the one that will retry it) and `claimed_until` ends that job's claim, after which
 * another job sends the same message again.
 */
export class Migration20261216000000_notification_windows_and_claims extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "notification_windows" (
      "channel_id" uuid not null references "notification_channels" ("id") on delete cascade,
      "type" text not null,
      "last_message_at" timestamptz not null,
      primary key ("channel_id", "type"));`);
    this.addSql(`insert into "notification_windows" ("channel_id", "type", "last_message_at")
      select c.id, t.type, c.last_message_at from "notification_channels" c cross join unnest(c.events) as t(type)
      where c.last_message_at is not null and c.type <> 'webhook';`);
    this.addSql(`alter table "notification_channels" drop column "last_message_at";`);
    this.addSql(`alter table "notification_outbox" add column "message_id" text null,
      add column "attempts" integer not null default 0, add column "claimed_by" text null, add column "claimed_until" timestamptz null;`);
    this.addSql(
      `create index "notification_outbox_message_id_index" on "notification_outbox" ("message_id") where "message_id" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "notification_outbox_message_id_index";`);
    this
      .addSql(`alter table "notification_outbox" drop column "message_id", drop column "attempts", drop column "claimed_by",
      drop column "claimed_until";`);
    this.addSql(`alter table "notification_channels" add column "last_message_at" timestamptz null;`);
    this.addSql(`update "notification_channels" c set "last_message_at" =
      (select max(w.last_message_at) from "notification_windows" w where w.channel_id = c.id);`);
    this.addSql(`drop table "notification_windows";`);
  }
}
