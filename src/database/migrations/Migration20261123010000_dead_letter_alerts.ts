import { Migration } from '@mikro-orm/migrations';

export class Migration20261123010000_dead_letter_alerts extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "dead_letter_alerts" (
      "id" uuid not null default gen_random_uuid(), "endpoint_id" uuid not null, "event_id" uuid not null,
      "created_at" timestamptz not null default now(), "sent_at" timestamptz null,
      constraint "dead_letter_alerts_pkey" primary key ("id"));`);
    this.addSql(
      `create index "dead_letter_alerts_unsent_index" on "dead_letter_alerts" ("endpoint_id", "created_at") where "sent_at" is null;`,
    );
    this.addSql(
      `create index "dead_letter_alerts_sent_index" on "dead_letter_alerts" ("endpoint_id", "sent_at" desc) where "sent_at" is not null;`,
    );
    this.addSql(
      `alter table "dead_letter_alerts" add constraint "dead_letter_alerts_endpoint_id_foreign" foreign key ("endpoint_id") references "endpoints" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "dead_letter_alerts" add constraint "dead_letter_alerts_event_id_foreign" foreign key ("event_id") references "events" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "dead_letter_alerts" cascade;`);
  }
}
