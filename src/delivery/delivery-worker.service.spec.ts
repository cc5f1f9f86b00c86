import type { ConfigService } from '@nestjs/config';
import type { Job, Queue } from 'bull';
import { Places } from '../common/places';
import type { Environment } from '../config/environment';
import { DELIVERY_CONCURRENCY, type DeliveryAttemptService, type JobRuns } from './delivery-attempt.service';
import { DISPATCH_JOB, type DispatchJob } from '../jobs/delivery-jobs';
import type { DeliveryQueue } from './delivery-queue.service';
import { DeliveryWorker } from './delivery-worker.service';

const config = {
  get: () => [5000],
} as unknown as ConfigService<Environment, true>;

/** Lets every attempt that can start, start. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A worker whose attempts the test drives: each attempt, once started, waits until the test ends its request
 * (`send`: it calls `onSent`, as a sent request does) and then its record (`finish`). `dispatch` hands it a
 * dispatch job of `count` deliveries named `<prefix><n>` and answers once the attempts that could start
 * have started; `end` finishes the rest and waits for every job.
 */
function workerWithHeldAttempts() {
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
  const jobs: Promise<void>[] = [];
  const dispatch = async (count: number, prefix = 'd') => {
    const deliveryIds = Array.from({ length: count }, (_, n) => `${prefix}${n}`);
    jobs.push(processor({ name: DISPATCH_JOB, data: { deliveryIds } satisfies DispatchJob } as Job));
    await settle();
  };
  const end = async () => {
    for (let finished = 0; finished < started.length; finished++) {
      started[finished].finish();
      await settle();
    }
    await Promise.all(jobs);
  };
  return { started, dispatch, end };
}

/** Ends the request of the attempt started `index`-th, and lets what can start next start. */
async function send(started: { send(): void }[], index: number) {
  started[index].send();
  await settle();
}

describe(DeliveryWorker.name, () => {
  it('loads a dispatch job’s next delivery once a request ends, without waiting for its record', async () => {
    const { started, dispatch, end } = workerWithHeldAttempts();
    await dispatch(DELIVERY_CONCURRENCY + 2);
    expect(started).toHaveLength(DELIVERY_CONCURRENCY);

    await send(started, 0);
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);
    // Its record still waits, and the place is not given back twice when it ends.
    started[0].finish();
    await settle();
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);

    await send(started, 1);
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 2);
    await end();
  });

  it('holds the place of a delivery that is not sent until its attempt ends', async () => {
    const { started, dispatch, end } = workerWithHeldAttempts();
    await dispatch(DELIVERY_CONCURRENCY + 1);
    expect(started).toHaveLength(DELIVERY_CONCURRENCY);
    // Held, deferred or finished before any request: the attempt ends without `onSent`.
    started[0].finish();
    await settle();
    expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);
    expect(started[DELIVERY_CONCURRENCY].id).toBe(`d${DELIVERY_CONCURRENCY}`);
    await end();
  });

  it('keeps one wait for a place per dispatch job, not one per delivery', async () => {
    const waits = [jest.spyOn(Places.prototype, 'acquire'), jest.spyOn(Places.prototype, 'acquireAhead')];
    const calls = () => waits.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    try {
      const { started, dispatch, end } = workerWithHeldAttempts();
      await dispatch(DELIVERY_CONCURRENCY + 50, 'a');
      await dispatch(30, 'b');
      expect(started).toHaveLength(DELIVERY_CONCURRENCY);
      // Every place taken, and each job's next delivery waiting: 80 deliveries wait in two calls.
      expect(calls()).toBe(DELIVERY_CONCURRENCY + 2);

      await send(started, 0);
      expect(started).toHaveLength(DELIVERY_CONCURRENCY + 1);
      expect(calls()).toBe(DELIVERY_CONCURRENCY + 3);
      await end();
    } finally {
      for (const spy of waits) spy.mockRestore();
    }
  });

  it('gives the places that free up to the oldest waiting dispatch job, one delivery of it at a time', async () => {
    const { started, dispatch, end } = workerWithHeldAttempts();
    await dispatch(DELIVERY_CONCURRENCY + 2, 'a');
    await dispatch(2, 'b');
    expect(started).toHaveLength(DELIVERY_CONCURRENCY);

    for (let index = 0; index < 4; index++) await send(started, index);
    expect(started.slice(DELIVERY_CONCURRENCY).map((attempt) => attempt.id)).toEqual([
      `a${DELIVERY_CONCURRENCY}`,
      `a${DELIVERY_CONCURRENCY + 1}`,
      'b0',
      'b1',
    ]);
    await end();
  });
});
