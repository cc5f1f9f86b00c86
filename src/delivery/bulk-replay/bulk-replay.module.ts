import { Module } from '@nestjs/common';
import { BulkReplayRepository } from './bulk-replay.repository';
import { BulkReplaysController } from './bulk-replays.controller';
import { BulkReplaysService } from './bulk-replays.service';

/** The bulk replays API (count, start, follow, cancel). */
@Module({
  controllers: [BulkReplaysController],
  providers: [BulkReplaysService, BulkReplayRepository],
})
export class BulkReplayModule {}
