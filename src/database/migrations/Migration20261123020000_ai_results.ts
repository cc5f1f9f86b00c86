import { Migration } from '@mikro-orm/migrations';

export class Migration20261123020000_ai_results extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "ai_results" (
      "event_id" uuid not null, "operation" text not null, "parameters" text not null default '',
      "provider" text not null, "result" text not null, "created_at" timestamptz not null default now(),
      constraint "ai_results_pkey" primary key ("event_id", "operation", "parameters"));`);
    this.addSql(
      `alter table "ai_results" add constraint "ai_results_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "ai_results" cascade;`);
  }
}
