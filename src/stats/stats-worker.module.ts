import { Module } from '@nestjs/common';
import { StatsRepository } from './stats.repository';
import { StatsUpkeep } from './stats-upkeep.service';

/** What a worker runs for the statistics: the upkeep of their counters. */
@Module({ providers: [StatsRepository, StatsUpkeep] })
export class StatsWorkerModule {}
