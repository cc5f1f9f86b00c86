import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { JobOptions, Queue } from 'bull';
import { GroupCommit } from '../common/group-commit';
import type { Environment } from '../config/environment';
import {
  DELIVERY_QUEUE,
  DISPATCH_JOB,
  DISPATCH_SIZE,
  type DeliveryJob,
  type DispatchJob,
  deliveryJobOptions,
  dispatchJobOptions,
} from '../jobs/delivery-jobs';

export interface QueuedDelivery {
  id: string;
  /** Attempts already made (a delivery re-enqueued by the sweeper continues its schedule). */
  priorAttempts?: number;
  /** Wait this long before the attempt (a held retry that is not yet due). */
  delayMs?: number;
  /** It was deferred before (by a dispatch job). */
  deferred?: true;
}

/**
 * New deliveries merged into one write to Redis at most, while another is being written: a busy capture
 * URL commits a few hundred batches a second, and one write for several of them pays the round trips and
 * Bull's client-side work once (BENCHMARKS.md, 2026-11-27).
 */
const DISPATCH_MERGE_MAX_IDS = 10 * DISPATCH_SIZE;
/**
 * New deliveries allowed to wait for that write. Past it (Redis slow to answer), a dispatch is refused at
 * once and its deliveries are left to the sweeper, as when Redis is away, instead of piling up in memory.
 */
const DISPATCH_QUEUE_MAX_IDS = 50_000;

/**
 * Producer side of the delivery queue. New deliveries go in dispatch jobs of up to DISPATCH_SIZE; a
 * delivery that needs a job of its own (a retry, a deferral, one the sweeper or a resume enqueues) gets one
 * whose job id is its delivery id. A hash in Redis maps each delivery of a pending dispatch job to that
 * job, so that the sweeper can tell a delivery waiting in a dispatch from one whose job was lost.
 */
@Injectable()
export class DeliveryQueue {
  private readonly retryDelaysMs: number[];
  private readonly dispatchesKey: string;
  private readonly dispatches = new GroupCommit<readonly string[], void>(
    async (batches) => {
      await this.write(batches.flat());
      return batches.map(() => undefined);
    },
    {
      maxInFlight: 1,
      maxBatchItems: DISPATCH_MERGE_MAX_IDS,
      maxBatchBytes: DISPATCH_MERGE_MAX_IDS,
      sizeOf: (deliveryIds) => deliveryIds.length,
      maxWaitingBytes: DISPATCH_QUEUE_MAX_IDS,
    },
  );

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob | DispatchJob>,
    config: ConfigService<Environment, true>,
  ) {
    this.retryDelaysMs = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
    this.dispatchesKey = `${config.get('REDIS_PREFIX', { infer: true })}:delivery-dispatches`;
  }

  /**
   * Adds the jobs in one round trip. Re-adding a delivery whose job is still in Redis is a no-op. Fails at
   * once while Redis is away, instead of piling the jobs up in the client's offline queue: the deliveries
   * are in PostgreSQL, and the sweeper enqueues them when Redis is back.
   */
  async enqueue(deliveries: QueuedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    this.assertReady();
    await this.queue.addBulk(
      deliveries.map((delivery) => ({
        data: delivery.deferred
          ? { deliveryId: delivery.id, deferred: true as const }
          : { deliveryId: delivery.id },
        opts: deliveryJobOptions(
          delivery.id,
          this.retryDelaysMs,
          delivery.priorAttempts ?? 0,
          delivery.delayMs ?? 0,
        ),
      })),
    );
  }

  /**
   * Dispatches new deliveries (never attempted), resolving once their jobs are in Redis. While an earlier
   * dispatch is being written, the deliveries wait and go with the others that arrive meanwhile, in one
   * write. Fails at once while Redis is away, or when too many wait (GroupCommitFullError), as `enqueue`
   * does.
   */
  async dispatch(deliveryIds: readonly string[]): Promise<void> {
    if (deliveryIds.length === 0) return;
    this.assertReady();
    await this.dispatches.submit(deliveryIds);
  }

  /**
   * Dispatch jobs of up to DISPATCH_SIZE, in two round trips (the map first, so that a delivery is never in
   * a job the sweeper cannot see). A single job is added without Bull's MULTI, which costs more on the
   * client than the job itself.
   */
  private async write(deliveryIds: readonly string[]): Promise<void> {
    this.assertReady();
    const jobs: { name: string; data: DispatchJob; opts: JobOptions }[] = [];
    for (let at = 0; at < deliveryIds.length; at += DISPATCH_SIZE) {
      const chunk = deliveryIds.slice(at, at + DISPATCH_SIZE);
      jobs.push({ name: DISPATCH_JOB, data: { deliveryIds: chunk }, opts: dispatchJobOptions(chunk) });
    }
    await this.queue.client.hset(
      this.dispatchesKey,
      Object.fromEntries(jobs.flatMap(({ data, opts }) => data.deliveryIds.map((id) => [id, opts.jobId]))),
    );
    if (jobs.length === 1) await this.queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
    else await this.queue.addBulk(jobs);
  }

  /**
   * Runs the deliveries' delayed jobs now; a job that is not delayed (waiting, running) or gone is left as it
   * is. Resolves with how many were promoted.
   */
  async promote(deliveryIds: readonly string[]): Promise<number> {
    if (deliveryIds.length === 0) return 0;
    this.assertReady();
    const promoted = await Promise.all(
      deliveryIds.map(async (id) => {
        const job = await this.queue.getJob(id);
        if (!job) return false;
        return job.promote().then(
          () => true,
          (error: Error) => {
            if (error.message.endsWith('is not in a delayed state')) return false;
            throw error;
          },
        );
      }),
    );
    return promoted.filter(Boolean).length;
  }

  /** The dispatch job each delivery is waiting in (undefined: none). */
  async dispatchesOf(deliveryIds: readonly string[]): Promise<(string | undefined)[]> {
    if (deliveryIds.length === 0) return [];
    const jobIds = await this.queue.client.hmget(this.dispatchesKey, ...deliveryIds);
    return jobIds.map((jobId) => jobId ?? undefined);
  }

  /** The deliveries left their dispatch job (it ended, or it is gone). */
  async forgetDispatches(deliveryIds: readonly string[]): Promise<void> {
    if (deliveryIds.length > 0) await this.queue.client.hdel(this.dispatchesKey, ...deliveryIds);
  }

  private assertReady(): void {
    if (this.queue.client.status !== 'ready') throw new Error(`Redis is ${this.queue.client.status}`);
  }
}
