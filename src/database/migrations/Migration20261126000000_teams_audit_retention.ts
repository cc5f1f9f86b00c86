import { Migration } from '@mikro-orm/migrations';

/**
 * Teams (README, "Teams"): a team, its members with their roles, and its invitations (a single-use
 * token, stored as a SHA-256 hash, valid 7 days). An endpoint belongs to its creator alone
 * (`team_id` null) or to a team; a team with endpoints cannot be deleted (`restrict`).
 * Retention: an endpoint's `retention_days` may shorten its plan's. The audit log keeps one row per
 * write through the API; it names its team and endpoint without foreign keys, so that it outlives them.
 */
export class Migration20261126000000_teams_audit_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "teams" (
      "id" uuid not null default gen_random_uuid() primary key,
      "name" text not null,
      "created_at" timestamptz not null default now());`);
    this.addSql(`create table "team_members" (
      "team_id" uuid not null references "teams" ("id") on delete cascade,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "role" text not null check ("role" in ('owner', 'admin', 'member', 'viewer')),
      "created_at" timestamptz not null default now(),
      primary key ("team_id", "user_id"));`);
    this.addSql(`create index "team_members_user_id_index" on "team_members" ("user_id");`);
    this.addSql(`create table "team_invitations" (
      "id" uuid not null default gen_random_uuid() primary key,
      "team_id" uuid not null references "teams" ("id") on delete cascade,
      "email" text not null,
      "role" text not null check ("role" in ('admin', 'member', 'viewer')),
      "token_hash" text not null unique,
      "invited_by" uuid null references "users" ("id") on delete set null,
      "expires_at" timestamptz not null,
      "accepted_at" timestamptz null,
      "created_at" timestamptz not null default now());`);
    this.addSql(
      `create index "team_invitations_team_id_index" on "team_invitations" ("team_id", "created_at");`,
    );
    this.addSql(
      `alter table "endpoints" add column "team_id" uuid null references "teams" ("id") on delete restrict,
         add column "retention_days" integer null check ("retention_days" between 1 and 3650);`,
    );
    this.addSql(
      `create index "endpoints_team_id_created_at_index" on "endpoints" ("team_id", "created_at") where "team_id" is not null;`,
    );
    this.addSql(`create table "audit_log" (
      "id" bigint generated always as identity primary key,
      "at" timestamptz not null default now(),
      "actor_type" text not null check ("actor_type" in ('user', 'api_key')),
      "actor_id" uuid not null,
      "actor_user_id" uuid not null,
      "actor_email" text not null,
      "action" text not null,
      "target_type" text not null,
      "target_id" text null,
      "account_user_id" uuid null,
      "team_id" uuid null,
      "endpoint_id" uuid null,
      "ip" text null,
      "changes" jsonb not null default '{}');`);
    this.addSql(
      `create index "audit_log_team_id_index" on "audit_log" ("team_id", "id") where "team_id" is not null;`,
    );
    this.addSql(
      `create index "audit_log_account_user_id_index" on "audit_log" ("account_user_id", "id") where "account_user_id" is not null;`,
    );
    this.addSql(
      `create index "audit_log_endpoint_id_index" on "audit_log" ("endpoint_id", "id") where "endpoint_id" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "audit_log";`);
    this.addSql(`drop index "endpoints_team_id_created_at_index";`);
    this.addSql(`alter table "endpoints" drop column "team_id", drop column "retention_days";`);
    this.addSql(`drop table "team_invitations";`);
    this.addSql(`drop table "team_members";`);
    this.addSql(`drop table "teams";`);
  }
}
