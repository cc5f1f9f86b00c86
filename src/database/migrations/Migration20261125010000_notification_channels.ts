import { Migration } from '@mikro-orm/migrations';

/**
 * Notification channels (README, "Notification channels"): a user's email, Slack, Discord or signed
 * webhook targets with the event types each subscribed to and its health, and their outbox: one row per
 * notification waiting to go out, deleted once sent (alone or in a digest) or dropped after every retry.
 * `last_message_at` (the last message sent or dropped) starts the channel's digest window.
 */
export class Migration20261125010000_notification_channels extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "notification_channels" (
      "id" uuid not null default gen_random_uuid() primary key,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "type" text not null check ("type" in ('email', 'slack', 'discord', 'webhook')),
      "target" text not null,
      "events" text[] not null,
      "sealed_secret" text null,
      "status" text not null default 'ok' check ("status" in ('ok', 'failing', 'disabled')),
      "last_error" text null,
      "last_sent_at" timestamptz null,
      "last_message_at" timestamptz null,
      "failing_since" timestamptz null,
      "dropped_messages" integer not null default 0,
      "created_at" timestamptz not null default now());`);
    this.addSql(`create index "notification_channels_user_id_index" on "notification_channels" ("user_id");`);
    this.addSql(`create table "notification_outbox" (
      "id" bigint generated always as identity primary key,
      "channel_id" uuid not null references "notification_channels" ("id") on delete cascade,
      "type" text not null,
      "data" jsonb not null,
      "created_at" timestamptz not null default now());`);
    this.addSql(
      `create index "notification_outbox_channel_id_index" on "notification_outbox" ("channel_id", "created_at");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "notification_outbox";`);
    this.addSql(`drop table "notification_channels";`);
  }
}
