import { Migration } from '@mikro-orm/migrations';
import { eventStatsApplySql, FREE_SHARD_OF_WRITER } from '../event-stats-functions';

/**
 * The statistics of an UPDATE of events (a batch of status changes) are netted, not joined: each new row
 * counts +1 and each old row -1, and a minute that nets to zero is left out, so that the transition tables
 * are never joined. After a few calls plpgsql kept a generic plan of the join, planned for one row a table,
 * and compared every new row with every old one (event-stats-functions.ts, UPDATE_DELTAS).
 */
export class Migration20261202000000_event_stats_netted_updates extends Migration {
  override async up(): Promise<void> {
    this.addSql(eventStatsApplySql(FREE_SHARD_OF_WRITER, 'netted'));
  }

  override async down(): Promise<void> {
    this.addSql(eventStatsApplySql(FREE_SHARD_OF_WRITER));
  }
}
