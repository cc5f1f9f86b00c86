import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Queue } from 'bull';
import { setTimeout as sleep } from 'node:timers/promises';
import { BULK_REPLAY_QUEUE, type BulkReplayJob, bulkReplayJobOptions } from '../../jobs/bulk-replay-jobs';
import { processJobs, reschedulingSweep } from '../../jobs/queue-worker';
import { DeliveryQueue } from '../delivery-queue.service';
import { DestinationBacklogs } from '../destination-backlogs.service';
import { BulkReplayRepository } from './bulk-replay.repository';

/** Events dispatched per transaction. */
const CHUNK_EVENTS = 200;
/**
 * A replay waits while one of the endpoint's active destinations has this many deliveries waiting: it
 * feeds the queue as fast as the destinations are served, instead of burying every other delivery behind
 * its thousands of jobs.
 */
export const BULK_REPLAY_MAX_BACKLOG = 1000;
const WAIT_MS = 500;
/**
 * Waits a job makes in a row before it ends, leaving the replay to the sweep (a new job within
 * SWEEP_INTERVAL_MS, jobs/queue-worker): a replay held up by a slow destination does not keep one of the
 * worker's places.
 */
const WAITS_PER_JOB = 20;
const BULK_REPLAY_CONCURRENCY = 4;

/**
 * Dispatches bulk replays (a worker: APP_ROLE `worker`, or the delivery thread of `all`): chunk by chunk,
 * each chunk's deliveries enqueued like a single replay's, pausing while the endpoint's destinations have
 * a full backlog, until every event is dispatched or the replay is cancelled. The job of a worker that dies
 * is taken over by Bull's stalled-job check; a replay left without a job is given one by the sweep.
 */
@Injectable()
export class BulkReplayWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(BulkReplayWorker.name);
  private closing = false;
  /** Running replays with no job (Redis lost it, or a worker stopped mid-way) get one again. */
  private readonly sweeps = reschedulingSweep(
    'bulk replay',
    this.logger,
    async () => (await this.replays.running()).map(({ id }) => id),
    (bulkReplayId) => this.queue.add({ bulkReplayId }, bulkReplayJobOptions(bulkReplayId)),
  );

  constructor(
    @InjectQueue(BULK_REPLAY_QUEUE) private readonly queue: Queue<BulkReplayJob>,
    private readonly replays: BulkReplayRepository,
    private readonly deliveries: DeliveryQueue,
    private readonly backlogs: DestinationBacklogs,
  ) {}

  onApplicationBootstrap(): void {
    processJobs(
      this.queue,
      {
        concurrency: BULK_REPLAY_CONCURRENCY,
        logger: this.logger,
        failed: 'bulk replay interrupted',
        fieldsOf: (job) => ({ bulkReplayId: job.data.bulkReplayId }),
      },
      ({ bulkReplayId }) => this.run(bulkReplayId),
    );
    this.sweeps.start();
  }

  /** Running replays stop at their next chunk; their jobs end and the sweep of another worker goes on. */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    await this.sweeps.stop();
  }

  private async run(bulkReplayId: string): Promise<void> {
    for (let waits = 0; !this.closing;) {
      const destinations = await this.replays.sendingDestinations(bulkReplayId);
      const backlogs = await this.backlogs.of(destinations);
      if ([...backlogs.values()].some((backlog) => backlog.pending >= BULK_REPLAY_MAX_BACKLOG)) {
        if (++waits > WAITS_PER_JOB) return;
        await sleep(WAIT_MS);
        continue;
      }
      waits = 0;
      const chunk = await this.replays.dispatchNext(bulkReplayId, CHUNK_EVENTS);
      // The deliveries are committed: if Redis fails now, the delivery sweeper enqueues them.
      await this.deliveries
        .dispatch(chunk.deliveryIds)
        .catch((error: Error) =>
          this.logger.warn(`bulk replay enqueue deferred to the sweeper: ${error.message}`),
        );
      if (!chunk.running) return;
    }
  }
}
