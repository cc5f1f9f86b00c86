import { Migration } from '@mikro-orm/migrations';

export class Migration20261123000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);

    this.addSql(
      `create table "app_settings" ("key" text not null, "value" text not null, constraint "app_settings_pkey" primary key ("key"));`,
    );

    this.addSql(`create table "users" (
      "id" uuid not null, "email" text not null, "name" text not null, "password_hash" text not null,
      "plan" text check ("plan" in ('free', 'starter', 'pro', 'team')) not null default 'free',
      "created_at" timestamptz not null default now(),
      constraint "users_pkey" primary key ("id"));`);
    this.addSql(`alter table "users" add constraint "users_email_unique" unique ("email");`);

    this.addSql(`create table "refresh_tokens" (
      "id" uuid not null, "user_id" uuid not null, "token_hash" text not null, "expires_at" timestamptz not null,
      "revoked_at" timestamptz null, "created_at" timestamptz not null default now(),
      constraint "refresh_tokens_pkey" primary key ("id"));`);
    this.addSql(`create index "refresh_tokens_user_id_index" on "refresh_tokens" ("user_id");`);
    this.addSql(
      `alter table "refresh_tokens" add constraint "refresh_tokens_token_hash_unique" unique ("token_hash");`,
    );
    this.addSql(
      `alter table "refresh_tokens" add constraint "refresh_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`create table "endpoints" (
      "id" uuid not null, "user_id" uuid not null, "name" text not null, "public_token" text not null,
      "is_active" boolean not null default true, "metadata" jsonb not null default '{}',
      "created_at" timestamptz not null default now(),
      constraint "endpoints_pkey" primary key ("id"));`);
    this.addSql(
      `alter table "endpoints" add constraint "endpoints_public_token_unique" unique ("public_token");`,
    );
    this.addSql(
      `create index "endpoints_user_id_created_at_index" on "endpoints" ("user_id", "created_at");`,
    );
    this.addSql(
      `alter table "endpoints" add constraint "endpoints_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`create table "destinations" (
      "id" uuid not null, "endpoint_id" uuid not null, "url" text not null, "secret" text null,
      "is_active" boolean not null default true, "created_at" timestamptz not null default now(),
      constraint "destinations_pkey" primary key ("id"));`);
    this.addSql(
      `create index "destinations_endpoint_id_created_at_index" on "destinations" ("endpoint_id", "created_at");`,
    );
    this.addSql(
      `alter table "destinations" add constraint "destinations_endpoint_id_foreign" foreign key ("endpoint_id") references "endpoints" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`create table "events" (
      "id" uuid not null, "endpoint_id" uuid not null,
      "status" text check ("status" in ('received', 'delivered', 'failed', 'dead_letter')) not null default 'received',
      "method" text not null, "headers" jsonb not null, "query" text not null default '',
      "body_text" text null, "body_bytes" bytea null, "source_ip" text null,
      "received_at" timestamptz not null default now(),
      constraint "events_pkey" primary key ("id"));`);
    this.addSql(
      `alter table "events" add constraint "events_endpoint_id_foreign" foreign key ("endpoint_id") references "endpoints" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create index "events_endpoint_received_index" on "events" ("endpoint_id", "received_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "events_endpoint_status_received_index" on "events" ("endpoint_id", "status", "received_at" desc, "id" desc);`,
    );
    this.addSql(
      `create index "events_body_text_trgm_index" on "events" using gin ("body_text" gin_trgm_ops);`,
    );

    this.addSql(`create table "deliveries" (
      "id" uuid not null, "event_id" uuid not null, "destination_id" uuid null, "destination_url" text not null,
      "dispatch_id" uuid not null,
      "status" text check ("status" in ('pending', 'failed', 'delivered', 'dead_letter')) not null default 'pending',
      "attempt_count" int not null default 0, "response_code" int null, "response_body" text null,
      "attempts" jsonb not null default '[]', "last_attempted_at" timestamptz null, "next_attempt_at" timestamptz null,
      "created_at" timestamptz not null default now(),
      constraint "deliveries_pkey" primary key ("id"));`);
    this.addSql(
      `create index "deliveries_event_created_index" on "deliveries" ("event_id", "created_at" desc);`,
    );
    this.addSql(`create index "deliveries_destination_id_index" on "deliveries" ("destination_id");`);
    this.addSql(
      `create index "deliveries_due_index" on "deliveries" ("next_attempt_at") where "status" in ('pending', 'failed');`,
    );
    this.addSql(
      `alter table "deliveries" add constraint "deliveries_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "deliveries" add constraint "deliveries_destination_id_foreign" foreign key ("destination_id") references "destinations" ("id") on update cascade on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "deliveries" cascade;`);
    this.addSql(`drop table if exists "events" cascade;`);
    this.addSql(`drop table if exists "destinations" cascade;`);
    this.addSql(`drop table if exists "endpoints" cascade;`);
    this.addSql(`drop table if exists "refresh_tokens" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
    this.addSql(`drop table if exists "app_settings" cascade;`);
  }
}
