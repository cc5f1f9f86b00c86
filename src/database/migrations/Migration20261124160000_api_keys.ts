import { Migration } from '@mikro-orm/migrations';

/** API keys (README, "API keys"): each kept as the SHA-256 hash of the key, with its scope and expiry. */
export class Migration20261124160000_api_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "api_keys" (
      "id" uuid not null primary key,
      "user_id" uuid not null references "users" ("id") on delete cascade,
      "name" text not null,
      "scope" text not null check ("scope" in ('read', 'write')),
      "prefix" text not null,
      "key_hash" text not null unique,
      "created_at" timestamptz not null default now(),
      "expires_at" timestamptz null,
      "last_used_at" timestamptz null);`);
    this.addSql(`create index "api_keys_user_id_index" on "api_keys" ("user_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table "api_keys";`);
  }
}
