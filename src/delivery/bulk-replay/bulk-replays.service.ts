import { InjectQueue } from '@nestjs/bull';
import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import type { Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import { eventFiltersOf } from '../../events/dto/list-events.query';
import { BULK_REPLAY_QUEUE, type BulkReplayJob, bulkReplayJobOptions } from '../../jobs/bulk-replay-jobs';
import type { BulkReplayDto, CreateBulkReplayDto } from './bulk-replay.dto';
import { type BulkReplayFilter, BulkReplayRepository } from './bulk-replay.repository';
import { afterCommit } from '../../database/write-transaction';

const BULK_REPLAY_NOT_FOUND = 'bulk replay not found';

/** The filter as stored and shown: only the fields sent, times normalised to ISO 8601 UTC. */
function filterOf(input: CreateBulkReplayDto): BulkReplayFilter {
  const { status, from, to, q } = eventFiltersOf(input);
  return {
    ...(status !== undefined ? { status } : {}),
    ...(from !== undefined ? { from: from.toISOString() } : {}),
    ...(to !== undefined ? { to: to.toISOString() } : {}),
    ...(q !== undefined ? { q } : {}),
  };
}

/** Bulk replays of a user's endpoint: count, start, follow, cancel. A worker dispatches them. */
@Injectable()
export class BulkReplaysService {
  private readonly logger = new Logger(BulkReplaysService.name);

  constructor(
    private readonly replays: BulkReplayRepository,
    @InjectQueue(BULK_REPLAY_QUEUE) private readonly queue: Queue<BulkReplayJob>,
  ) {}

  /** The number of events a bulk replay with this filter would replay now. */
  async count(endpointId: string, input: CreateBulkReplayDto): Promise<number> {
    return this.replays.count(endpointId, filterOf(input));
  }

  async create(endpointId: string, input: CreateBulkReplayDto): Promise<BulkReplayDto> {
    const replay = await this.replays.create(randomUUID(), endpointId, filterOf(input));
    if (!replay)
      throw new ConflictException('the endpoint has no active destination: add or activate one, then replay');
    // Once the replay is committed (a job taken before would not find it): if Redis is down then, the
    // worker's sweep starts it when Redis is back.
    await afterCommit(async () => {
      this.queue
        .add({ bulkReplayId: replay.id }, bulkReplayJobOptions(replay.id))
        .catch((error: Error) =>
          this.logger.warn(`bulk replay start deferred to the sweep: ${error.message}`),
        );
    });
    return replay;
  }

  async list(endpointId: string): Promise<BulkReplayDto[]> {
    return this.replays.list(endpointId);
  }

  async get(endpointId: string, id: string): Promise<BulkReplayDto> {
    return this.found(await this.replays.find(endpointId, id));
  }

  async cancel(endpointId: string, id: string): Promise<BulkReplayDto> {
    return this.found(await this.replays.cancel(endpointId, id));
  }

  private found(replay: BulkReplayDto | null): BulkReplayDto {
    if (!replay) throw new NotFoundException(BULK_REPLAY_NOT_FOUND);
    return replay;
  }
}
