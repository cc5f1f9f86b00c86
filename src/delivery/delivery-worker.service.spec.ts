import type { ConfigService } from '@nestjs/config';
import type { Job, Queue } from 'bull';
import type { Environment } from '../config/environment';
import { DELIVERY_CONCURRENCY, type DeliveryAttemptService, type JobRuns } from './delivery-attempt.service';
import { DISPATCH_JOB, type DispatchJob } from './delivery-jobs';
import type { DeliveryQueue } from './delivery-queue.service';
import { DeliveryWorker } from './delivery-worker.service';

const config = {
  get: () => [5000],
} as unknown as ConfigService<Environment, true>;

/** Lets every attempt that can start, start. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A worker whose attempts the test drives, given a dispatch job of `count` deliveries: each attempt, once
 * started, waits until the test ends its request (`send`: it calls `onSent`, as a sent request does) and then
 * its record (`finish`). Answers once the attempts that could start have started; `end` finishes the rest.
 */
async function dispatchWithHeldAttempts(count: number) {
  const started: { id: string; send(): void; finish(): void }[] = [];
  const attempts = {
    attempt: (id: string, runs: JobRuns) =>
      new Promise<void>((finish) =>
        started.push({ id, send: () => runs.onSent?.(), finish: () => finish() }),
      ),
  } as unknown as DeliveryAttemptService;
  let processor: (job: Job) => Promise<void> = () => Promise.resolve();
  const queue = {
    process: (_name: string, _concurrency: number, handler: typeof processor) => (processor = handler),
    on: () => undefined,
  } as unknown as Queue;
  const producer = {
    enqueue: jest.fn().mockResolvedValue(undefined),
    forgetDispatches: jest.fn().mockResolvedValue(undefined),
  } as unknown as DeliveryQueue;
  new DeliveryWorker(queue, producer, attempts, config).onApplicationBootstrap();
  const job = processor({
    name: DISPATCH_JOB,
    data: { deliveryIds: Array.from({ length: count }, (_, n) => `d${n}`) } satisfies DispatchJob,
  } as Job);
  await settle();
  const end = async () => {
    for (const attempt of started.slice(1)) attempt.finish();
    await job;
  };
  return { started, end };
}

describe(DeliveryWorker.name, () => {
  it('loads a dispatch job’s next delivery once a request ends, without waiting for its record', async () => {
    const { started, end } = await dispatchWithHeldAttempts(DELIVERY_CONCURRENCY + 2);
    expect(started).toHaveLength(DELIVERY_CONCURRENCY);

    started[0].send();
    await settle();
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);
    // Its record still waits, and the place is not given back twice when it ends.
    started[0].finish();
    await settle();
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);

    started[1].send();
    await settle();
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 2);
    await end();
  });

  it('holds the place of a delivery that is not sent until its attempt ends', async () => {
    const { started, end } = await dispatchWithHeldAttempts(DELIVERY_CONCURRENCY + 1);
    expect(started).toHaveLength(DELIVERY_CONCURRENCY);
    // Held, deferred or finished before any request: the attempt ends without `onSent`.
    started[0].finish();
    await settle();
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);
    expect(started[DELIVERY_CONCURRENCY].id).toBe(`d${DELIVERY_CONCURRENCY}`);
    await end();
  });
});
