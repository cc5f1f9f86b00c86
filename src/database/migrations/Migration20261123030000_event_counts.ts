import { Migration } from '@mikro-orm/migrations';
import { CREATE_EVENT_COUNTS_SQL, DROP_EVENT_COUNTS_SQL } from '../event-counts-sql';

/**
 * Exact event counts per endpoint and status without counting a million rows: statement-level triggers
 * on `events` append one signed delta per (endpoint, status) a statement changed (from its transition
 * tables, so a batch of captures adds one row, not one per event), and readers sum an endpoint's rows.
 * Appending never waits on another writer; the rows of an endpoint are folded into one per status from
 * time to time (delete ... returning, then insert the sums, in one statement). Deltas of an endpoint that
 * is being deleted are not written: its rows go with it. Dropped since
 * Migration20261205000000_event_counts_from_stats: the statistics' day rows count the same.
 */
export class Migration20261123030000_event_counts extends Migration {
  override async up(): Promise<void> {
    for (const sql of CREATE_EVENT_COUNTS_SQL) this.addSql(sql);
  }

  override async down(): Promise<void> {
    for (const sql of DROP_EVENT_COUNTS_SQL) this.addSql(sql);
  }
}
