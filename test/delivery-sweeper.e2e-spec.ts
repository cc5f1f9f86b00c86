import type { ConfigService } from '@nestjs/config';
import Bull, { type Queue } from 'bull';
import { randomUUID } from 'node:crypto';
import type { Environment } from '../src/config/environment';
import { DELIVERY_QUEUE, DISPATCH_JOB, type DeliveryJob, type DispatchJob } from '../src/jobs/delivery-jobs';
import { DeliveryQueue } from '../src/delivery/delivery-queue.service';
import { DeliverySweeper } from '../src/delivery/delivery-sweeper.service';
import type { DueDelivery, OutboxRepository } from '../src/delivery/outbox.repository';
import { deleteRedisKeys } from './support/test-app';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The producer's dispatch jobs and the sweeper's look into Redis, against a real Bull queue of the test's
 * own (jobs stay where the test put them): PostgreSQL's side, which deliveries are overdue, is given by the
 * test.
 */
describe('delivery queue and sweeper: dispatch jobs, and which overdue deliveries lost their job', () => {
  const prefix = `hooktrail_test_${randomUUID().slice(0, 8)}`;
  let queuePrefix: string;
  let queue: Queue<DeliveryJob | DispatchJob>;
  let producer: DeliveryQueue;
  const postponed: string[] = [];

  /**
   * A sweep that finds `overdue` overdue in PostgreSQL, all of them still owed when it looks again except
   * `finishedMeanwhile`.
   */
  const sweep = (overdue: DueDelivery[], finishedMeanwhile: string[] = []) =>
    new DeliverySweeper(queue, producer, {
      findOverdue: async () => overdue.splice(0),
      stillOwed: async (jobless: DueDelivery[]) =>
        jobless.filter((delivery) => !finishedMeanwhile.includes(delivery.id)),
      postpone: async (ids: string[]) => void postponed.push(...ids),
    } as unknown as OutboxRepository).sweep();

  beforeEach(async () => {
    queuePrefix = `${prefix}:${randomUUID()}:bull`;
    queue = new Bull(DELIVERY_QUEUE, REDIS_URL, { prefix: queuePrefix });
    await queue.client.ping(); // connected: the producer refuses to queue commands while Redis is away
    const config = {
      get: (name: keyof Environment) =>
        ({ DELIVERY_RETRY_DELAYS_MS: [5000, 25_000, 120_000, 600_000], REDIS_PREFIX: prefix })[
          name as string
        ],
    } as unknown as ConfigService<Environment, true>;
    producer = new DeliveryQueue(queue, config);
    postponed.length = 0;
  });

  afterEach(() => queue.close());
  afterAll(() => deleteRedisKeys(REDIS_URL, prefix));

  it('merges the dispatches that arrive while one is written into one job', async () => {
    const [first, second, third] = Array.from({ length: 3 }, () => [randomUUID(), randomUUID()]);

    // The first is written at once; the others wait for it, then go together.
    await Promise.all([producer.dispatch(first), producer.dispatch(second), producer.dispatch(third)]);

    const jobs = await queue.getJobs(['waiting']);
    expect(jobs.map((job) => (job.data as DispatchJob).deliveryIds).sort()).toEqual(
      [first, [...second, ...third]].sort(),
    );
    expect(await producer.dispatchesOf([...first, ...second, ...third])).toEqual([
      ...first.map(() => `dispatch:${first[0]}`),
      ...[...second, ...third].map(() => `dispatch:${second[0]}`),
    ]);
  });

  it('splits a merged write of more than 100 deliveries into jobs of 100', async () => {
    const ids = (count: number) => Array.from({ length: count }, () => randomUUID());
    const [first, second, third] = [ids(1), ids(60), ids(70)];

    // The first is written at once; the 130 that waited for it go in one write of two jobs.
    await Promise.all([producer.dispatch(first), producer.dispatch(second), producer.dispatch(third)]);

    const jobs = await queue.getJobs(['waiting']);
    const sizes = jobs.map((job) => (job.data as DispatchJob).deliveryIds.length).sort((a, b) => a - b);
    expect(sizes).toEqual([1, 30, 100]);
    const merged = [...second, ...third];
    expect(await producer.dispatchesOf(merged)).toEqual([
      ...merged.slice(0, 100).map(() => `dispatch:${merged[0]}`),
      ...merged.slice(100).map(() => `dispatch:${merged[100]}`),
    ]);
  });

  it('leaves alone a delivery waiting in a live dispatch job and in its own job; re-enqueues the rest', async () => {
    const [waiting, withOwnJob, neverEnqueued, dispatchGone] = Array.from({ length: 4 }, () => randomUUID());
    await producer.dispatch([waiting]);
    await producer.enqueue([{ id: withOwnJob, priorAttempts: 1, delayMs: 60_000 }]);
    // Its dispatch job ran and went (its worker died before forgetting it, or the job was removed).
    await producer.dispatch([dispatchGone]);
    await (await queue.getJob(`dispatch:${dispatchGone}`))!.remove();
    const all = [waiting, withOwnJob, neverEnqueued, dispatchGone];

    await sweep(all.map((id) => ({ id, attemptCount: 2 })));

    expect(await queue.getJob(waiting)).toBeNull();
    expect(await producer.dispatchesOf([waiting])).toEqual([`dispatch:${waiting}`]);
    expect((await queue.getJob(withOwnJob))!.opts.delay).toBe(60_000);
    for (const lost of [neverEnqueued, dispatchGone]) {
      const job = await queue.getJob(lost);
      expect(job!.data).toEqual({ deliveryId: lost });
      // It continues its retry schedule: 2 attempts made.
      expect(job!.opts.backoff).toMatchObject({ options: { priorAttempts: 2 } });
    }
    expect(await producer.dispatchesOf([dispatchGone])).toEqual([undefined]);
    expect(postponed.sort()).toEqual(all.sort());
  });

  it('leaves alone a delivery whose job finished it, and went, while the sweep read Redis', async () => {
    // Neither has a job in Redis; PostgreSQL, asked again, owes an attempt only to `lost`.
    const [finished, lost] = [randomUUID(), randomUUID()];

    await sweep(
      [finished, lost].map((id) => ({ id, attemptCount: 4 })),
      [finished],
    );

    expect(await queue.getJob(finished)).toBeNull();
    expect((await queue.getJob(lost))!.data).toEqual({ deliveryId: lost });
    expect(postponed.sort()).toEqual([finished, lost].sort());
  });

  it('re-enqueues a delivery whose own job failed for good, in place of that job', async () => {
    const id = randomUUID();
    // A worker of its own, closed before the sweep: it fails the job with no run left, as Bull leaves a job
    // that stalled too often.
    const worker = new Bull<DeliveryJob>(DELIVERY_QUEUE, REDIS_URL, { prefix: queuePrefix });
    const failed = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
    void worker.process(async (job) => {
      await job.discard();
      throw new Error('job stalled more than allowable limit');
    });
    await producer.enqueue([{ id, priorAttempts: 3 }]);
    await failed;
    await worker.close();
    expect(await (await queue.getJob(id))!.isFailed()).toBe(true);

    await sweep([{ id, attemptCount: 4 }]);

    const again = (await queue.getJob(id))!;
    expect(await again.isFailed()).toBe(false);
    expect(again.data).toEqual({ deliveryId: id });
    expect(again.opts.backoff).toMatchObject({ options: { priorAttempts: 4 } });
  });

  it('re-enqueues a delivery whose dispatch job failed', async () => {
    const id = randomUUID();
    const failed = new Promise((resolve) => queue.once('failed', resolve));
    void queue.process(DISPATCH_JOB, async () => {
      throw new Error('a continuation could not be enqueued');
    });
    await producer.dispatch([id]);
    await failed;

    await sweep([{ id, attemptCount: 0 }]);

    expect((await queue.getJob(id))!.data).toEqual({ deliveryId: id });
    expect(await producer.dispatchesOf([id])).toEqual([undefined]);
  });
});
