import { Module } from '@nestjs/common';
import { RetentionRepository } from './retention.repository';
import { RetentionWorker } from './retention-worker.service';

/** What a worker runs for retention: the periodic deletion of expired events (README, "Retention"). */
@Module({ providers: [RetentionRepository, RetentionWorker] })
export class RetentionWorkerModule {}
