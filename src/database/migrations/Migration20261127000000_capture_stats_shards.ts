import { Migration } from '@mikro-orm/migrations';
import { eventStatsAddSql, eventStatsApplySql, SHARD_BY_WRITER } from '../event-stats-functions';

const DELTAS = 'uuid[], timestamptz[], integer[], integer[], integer[], integer[]';

/**
 * A capture never waits for a delivery worker's transaction on a statistics row. Before, every writer of
 * `endpoint_event_stats` took the shard `pg_backend_pid() % 8`: a capture whose connection shared its shard
 * with a worker's waited on the endpoint's current minute, hour and day rows until the worker's batch
 * committed, and past the capture statement's time-out it was answered 503 (seen in the worker-kill test).
 * Captures and the other writers now use disjoint shards; reads sum every shard, and the upkeep folds past
 * ones into shard 0 (which only captures of the current buckets otherwise write).
 */
export class Migration20261127000000_capture_stats_shards extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop function "endpoint_event_stats_add"(${DELTAS});`);
    this.addSql(eventStatsAddSql(SHARD_BY_WRITER));
    this.addSql(eventStatsApplySql(SHARD_BY_WRITER));
  }

  override async down(): Promise<void> {
    this.addSql(`drop function "endpoint_event_stats_add"(integer, ${DELTAS});`);
    this.addSql(eventStatsAddSql(null));
    this.addSql(eventStatsApplySql(null));
  }
}
