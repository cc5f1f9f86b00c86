import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery.module';
import { BulkReplayRepository } from './bulk-replay.repository';
import { BulkReplayWorker } from './bulk-replay-worker.service';

/** What a worker runs for bulk replays: their dispatch, and the sweep of replays left without a job. */
@Module({
  imports: [DeliveryModule],
  providers: [BulkReplayWorker, BulkReplayRepository],
})
export class BulkReplayWorkerModule {}
