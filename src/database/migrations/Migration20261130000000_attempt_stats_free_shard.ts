import { Migration } from '@mikro-orm/migrations';
import { attemptStatsApplySql, FREE_ATTEMPT_SHARD } from '../attempt-stats-functions';

/**
 * The attempts that deletes take back out of `destination_attempt_stats` (retention, a removed endpoint) go
 * to a shard that no other transaction holds, as the delivery worker's attempts already do
 * (stats/attempt-stats.ts): the backend's own shard, `pg_backend_pid() % 8`, could be the one a worker's
 * batch holds until its commit, and the delete then waited for it.
 */
export class Migration20261130000000_attempt_stats_free_shard extends Migration {
  override async up(): Promise<void> {
    this.addSql(attemptStatsApplySql(false, FREE_ATTEMPT_SHARD));
  }

  override async down(): Promise<void> {
    this.addSql(attemptStatsApplySql(false));
  }
}
