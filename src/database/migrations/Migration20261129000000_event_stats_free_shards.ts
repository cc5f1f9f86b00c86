import { Migration } from '@mikro-orm/migrations';
import {
  eventStatsAddSql,
  eventStatsApplySql,
  FREE_SHARD_OF_WRITER,
  SHARD_BY_WRITER,
  STATS_FREE_SHARD_SQL,
} from '../event-stats-functions';

/**
 * Two costs of the statistics that every statement on events pays (a batch of captures, a batch of status
 * changes), measured in the delivery benchmark with pg_stat_statements:
 * - Writers waited for each other. A backend wrote the shard `pg_backend_pid() % 8` of its half, so two
 *   pooled connections with the same remainder (likely among ten) queued on the same rows until the
 *   other's transaction committed: in one 24-s drain the insert's calls took 5.8 s in all, 7.9 ms each
 *   (0.13 s, 0.15 ms each, after). Now each transaction takes a shard of its half that no other holds
 *   (`stats_free_shard`), and waits only when all eight are held. The delivery worker's attempts take
 *   theirs in `destination_attempt_stats` the same way (stats/attempt-stats.ts).
 * - `endpoint_event_stats_add` becomes a `plpgsql` function with the same body: as a `sql` function that
 *   PostgreSQL cannot inline (an insert), it was parsed and planned again at every call; `plpgsql` keeps
 *   the plan for the session, and the pooled connections live long.
 */
export class Migration20261129000000_event_stats_free_shards extends Migration {
  override async up(): Promise<void> {
    this.addSql(STATS_FREE_SHARD_SQL);
    this.addSql(eventStatsAddSql(SHARD_BY_WRITER, 'plpgsql'));
    this.addSql(eventStatsApplySql(FREE_SHARD_OF_WRITER));
  }

  override async down(): Promise<void> {
    this.addSql(eventStatsApplySql(SHARD_BY_WRITER));
    this.addSql(`drop function "stats_free_shard"(text, integer);`);
    this.addSql(eventStatsAddSql(SHARD_BY_WRITER));
  }
}
