import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask } from '../common/periodic-task';
import { StatsRepository } from './stats.repository';

/** How often the counters are tidied: minute rows are kept two hours, so once a minute is plenty. */
const UPKEEP_INTERVAL_MS = 60_000;

/**
 * The workers' part of the statistics: every minute, deletes the minute rows no window reads any more and
 * folds the shards of past hours and days into one row each (StatsRepository).
 */
@Injectable()
export class StatsUpkeep implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(StatsUpkeep.name);
  private readonly runs = new PeriodicTask(
    () => this.run(),
    UPKEEP_INTERVAL_MS,
    (error) => this.logger.warn(`statistics not tidied yet: ${error.message}`),
  );

  constructor(private readonly stats: StatsRepository) {}

  onApplicationBootstrap(): void {
    this.runs.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.runs.stop();
  }

  async run(): Promise<void> {
    await this.stats.deleteOldMinuteRows();
    await this.stats.foldPastShards();
  }
}
