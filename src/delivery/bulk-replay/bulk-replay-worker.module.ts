import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery.module';
import { BULK_REPLAY_QUEUE } from './bulk-replay-jobs';
import { BulkReplayRepository } from './bulk-replay.repository';
import { BulkReplayWorker } from './bulk-replay-worker.service';

/**
 * A replay's job runs as long as the replay (its lock renewed meanwhile); the job of a worker that died is
 * taken over within about 20 s. Two workers running one replay at once (a lock lost under load) dispatch
 * nothing twice: each chunk locks the replay's row.
 */
export const bulkReplayQueue = BullModule.registerQueue({
  name: BULK_REPLAY_QUEUE,
  settings: { lockDuration: 15_000, stalledInterval: 5_000 },
});

/** What a worker runs for bulk replays: their dispatch, and the sweep of replays left without a job. */
@Module({
  imports: [DeliveryModule, bulkReplayQueue],
  providers: [BulkReplayWorker, BulkReplayRepository],
})
export class BulkReplayWorkerModule {}
