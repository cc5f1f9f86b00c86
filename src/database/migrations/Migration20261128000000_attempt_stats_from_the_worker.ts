import { Migration } from '@mikro-orm/migrations';
import { ATTEMPT_STATS_UPDATE_TRIGGER_SQL, attemptStatsApplySql } from '../attempt-stats-functions';

/**
 * The delivery worker adds its attempts to `destination_attempt_stats` itself (stats/attempt-stats.ts), in
 * the transaction that records them: it holds each attempt's destination, time, duration and status code,
 * so the statement sends per-bucket totals, where the trigger read both transition tables of every batch
 * and parsed each appended `attempts` entry back out of its JSON. Deleted deliveries still take their
 * attempts back out through the delete trigger.
 */
export class Migration20261128000000_attempt_stats_from_the_worker extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop trigger "deliveries_stats_update" on "deliveries";`);
    this.addSql(attemptStatsApplySql(false));
  }

  override async down(): Promise<void> {
    this.addSql(attemptStatsApplySql(true));
    this.addSql(ATTEMPT_STATS_UPDATE_TRIGGER_SQL);
  }
}
