import { Migration } from '@mikro-orm/migrations';
import { CREATE_EVENT_COUNTS_SQL, DROP_EVENT_COUNTS_SQL } from '../event-counts-sql';

/**
 * Counts of an endpoint's events read from the statistics' day rows, not from `event_counts`: statement
 * triggers on `events` kept both in the same transactions, and the day rows of `endpoint_event_stats`
 * (every shard, every day) already sum to the endpoint's events per status, since status changes and
 * deletes subtract what they move and day rows are never deleted. So every capture batch, status change
 * and delete paid two triggers for one fact. The `event_counts` trigger and table go, and with them the
 * sweeper's folding of its deltas (BENCHMARKS.md, session 38).
 */
export class Migration20261205000000_event_counts_from_stats extends Migration {
  override async up(): Promise<void> {
    for (const sql of DROP_EVENT_COUNTS_SQL) this.addSql(sql);
  }

  override async down(): Promise<void> {
    for (const sql of CREATE_EVENT_COUNTS_SQL) this.addSql(sql);
  }
}
