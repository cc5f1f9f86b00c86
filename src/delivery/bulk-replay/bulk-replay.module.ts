import { Module } from '@nestjs/common';
import { bulkReplayQueue } from './bulk-replay-worker.module';
import { BulkReplayRepository } from './bulk-replay.repository';
import { BulkReplaysController } from './bulk-replays.controller';
import { BulkReplaysService } from './bulk-replays.service';

/** The bulk replays API (count, start, follow, cancel). */
@Module({
  imports: [bulkReplayQueue],
  controllers: [BulkReplaysController],
  providers: [BulkReplaysService, BulkReplayRepository],
})
export class BulkReplayModule {}
