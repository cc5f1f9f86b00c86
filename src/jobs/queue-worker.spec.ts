import type { Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { processJobs, reschedulingSweep } from './queue-worker';

const settle = () => new Promise((resolve) => setImmediate(resolve));

function fakeLogger() {
  const warn = jest.fn();
  return { logger: { warn } as unknown as Logger, warn };
}

describe(processJobs.name, () => {
  it('runs each job with its data and logs a failed one with the fields that name it', async () => {
    let processor: (job: Job<{ id: string }>) => Promise<unknown> = () => Promise.resolve();
    let onFailed: (job: Job<{ id: string }>, error: Error) => void = () => undefined;
    const queue = {
      process: jest.fn((_concurrency: number, handler: typeof processor) => (processor = handler)),
      on: jest.fn((_event: string, handler: typeof onFailed) => (onFailed = handler)),
    } as unknown as Queue<{ id: string }>;
    const { logger, warn } = fakeLogger();
    const run = jest.fn(() => Promise.resolve('done'));

    processJobs(
      queue,
      { concurrency: 3, logger, failed: 'job failed', fieldsOf: (job) => ({ id: job.data.id }) },
      run,
    );
    const job = { data: { id: 'a' }, attemptsMade: 1 } as Job<{ id: string }>;

    await expect(processor(job)).resolves.toBe('done');
    expect(queue.process).toHaveBeenCalledWith(3, expect.any(Function));
    expect(run).toHaveBeenCalledWith({ id: 'a' }, job);
    onFailed(job, new Error('boom'));
    expect(queue.on).toHaveBeenCalledWith('failed', expect.any(Function));
    expect(warn).toHaveBeenCalledWith({ id: 'a', error: 'boom' }, 'job failed');
  });
});

/** Runs one sweep over the keys a, b and c, with `schedule` for each; returns what it scheduled and warned. */
async function sweepOnce(schedule: (key: string) => Promise<unknown>) {
  const { logger, warn } = fakeLogger();
  const scheduled: string[] = [];
  const sweep = reschedulingSweep(
    'thing',
    logger,
    () => Promise.resolve(['a', 'b', 'c']),
    async (key) => {
      await schedule(key);
      scheduled.push(key);
    },
  );
  sweep.wake();
  await settle();
  await sweep.stop();
  return { scheduled, warn };
}

describe(reschedulingSweep.name, () => {
  it('schedules every overdue key, one after the other', async () => {
    const { scheduled, warn } = await sweepOnce(() => Promise.resolve());
    expect(scheduled).toEqual(['a', 'b', 'c']);
    expect(warn).not.toHaveBeenCalled();
  });

  it('ends the sweep at a key that fails, with a warning naming what it sweeps', async () => {
    const { scheduled, warn } = await sweepOnce((key) =>
      key === 'b' ? Promise.reject(new Error('Redis is down')) : Promise.resolve(),
    );
    expect(scheduled).toEqual(['a']);
    expect(warn).toHaveBeenCalledWith('thing sweep skipped: Redis is down');
  });
});
