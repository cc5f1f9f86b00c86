import { Module } from '@nestjs/common';
import { StatsController } from './stats.controller';
import { StatsRepository } from './stats.repository';
import { StatsService } from './stats.service';
import { StatsUpkeep } from './stats-upkeep.service';

/** GET /api/endpoints/:id/stats (README, "Statistics"). */
@Module({
  controllers: [StatsController],
  providers: [StatsService, StatsRepository],
})
export class StatsModule {}

/** What a worker runs for the statistics: the upkeep of their counters. */
@Module({ providers: [StatsRepository, StatsUpkeep] })
export class StatsWorkerModule {}
