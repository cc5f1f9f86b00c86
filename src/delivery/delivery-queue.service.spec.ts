import type { ConfigService } from '@nestjs/config';
import type { JobOptions, Queue } from 'bull';
import { GroupCommitFullError } from '../common/group-commit';
import type { Environment } from '../config/environment';
import type { DispatchJob } from '../jobs/delivery-jobs';
import { DeliveryQueue } from './delivery-queue.service';

interface AddedJob {
  data: DispatchJob;
  opts: JobOptions;
}

/** A Bull queue whose job writes (`add`, `addBulk`) the test lets finish by hand; `hset` answers at once. */
function heldQueue() {
  const writes: { jobs: AddedJob[]; finish(): void }[] = [];
  const held = (jobs: AddedJob[]) => new Promise<void>((finish) => writes.push({ jobs, finish }));
  const queue = {
    client: { status: 'ready', hset: jest.fn().mockResolvedValue(0) },
    add: (_name: string, data: DispatchJob, opts: JobOptions) => held([{ data, opts }]),
    addBulk: (jobs: AddedJob[]) => held(jobs),
  };
  return { queue: queue as unknown as Queue, writes, hset: queue.client.hset };
}

const config = {
  get: (key: keyof Environment) =>
    ({ DELIVERY_RETRY_DELAYS_MS: [5000], REDIS_PREFIX: 'test' })[key as string],
} as unknown as ConfigService<Environment, true>;

const ids = (from: number, count: number) => Array.from({ length: count }, (_, n) => `d${from + n}`);

/** Lets the dispatcher run up to its next job write. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe(DeliveryQueue.name, () => {
  it('writes what arrives during a write in the next one, up to 1,000 deliveries in jobs of 100', async () => {
    const { queue, writes, hset } = heldQueue();
    const sut = new DeliveryQueue(queue, config);
    const first = sut.dispatch(ids(0, 3));
    await settle();
    const waiting = [sut.dispatch(ids(3, 700)), sut.dispatch(ids(703, 400)), sut.dispatch(ids(1103, 5))];
    await settle();
    expect(writes.map((write) => write.jobs.length)).toEqual([1]);

    writes[0].finish();
    await first;
    await settle();
    // 700 + 400 would pass 1,000: the first waiting dispatch goes alone, in 7 jobs of 100.
    expect(writes[1].jobs.map((job) => job.data.deliveryIds.length)).toEqual([
      100, 100, 100, 100, 100, 100, 100,
    ]);
    expect(writes[1].jobs[0]).toMatchObject({
      data: { deliveryIds: ids(3, 100) },
      opts: { jobId: 'dispatch:d3' },
    });
    // Each delivery is in the dispatch map, pointing at its job, before its job is written.
    expect(hset).toHaveBeenLastCalledWith(
      'test:delivery-dispatches',
      expect.objectContaining({ d3: 'dispatch:d3', d102: 'dispatch:d3', d103: 'dispatch:d103' }),
    );
    writes[1].finish();
    await waiting[0];
    await settle();
    expect(writes[2].jobs.map((job) => job.data.deliveryIds.length)).toEqual([100, 100, 100, 100, 5]);
    expect(writes[2].jobs.at(-1)?.data.deliveryIds).toEqual(ids(1103, 5));
    writes[2].finish();
    await Promise.all(waiting);
  });

  it('refuses a dispatch at once while 50,000 deliveries wait for a write, and takes one again once they go', async () => {
    const { queue, writes } = heldQueue();
    const sut = new DeliveryQueue(queue, config);
    const first = sut.dispatch(ids(0, 1));
    const waiting = Array.from({ length: 50 }, (_, n) => sut.dispatch(ids(1 + 1_000 * n, 1_000)));
    await expect(sut.dispatch(ids(50_001, 1))).rejects.toBeInstanceOf(GroupCommitFullError);

    writes[0].finish();
    await first;
    await settle();
    // The next write took 1,000 of them: there is room again.
    expect(writes[1].jobs.flatMap((job) => job.data.deliveryIds)).toEqual(ids(1, 1_000));
    const next = sut.dispatch(ids(50_001, 1));
    for (let write = 1; write < writes.length; write++) {
      writes[write].finish();
      await settle();
    }
    await Promise.all([...waiting, next]);
    expect(writes).toHaveLength(52);
    expect(writes.at(-1)?.jobs.flatMap((job) => job.data.deliveryIds)).toEqual(['d50001']);
  });

  it('fails at once, before queueing, while Redis is away', async () => {
    const { queue, writes } = heldQueue();
    (queue.client as { status: string }).status = 'reconnecting';
    await expect(new DeliveryQueue(queue, config).dispatch(ids(0, 1))).rejects.toThrow(
      'Redis is reconnecting',
    );
    expect(writes).toHaveLength(0);
  });
});
