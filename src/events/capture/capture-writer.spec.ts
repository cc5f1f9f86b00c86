import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import type { DeliveryQueue } from '../../delivery/delivery-queue.service';
import type { Metrics } from '../../metrics/metrics.service';
import type { CaptureRepository, NewCapture, StoreOutcome } from './capture.repository';
import { CaptureWriter } from './capture-writer';

function capture(token: string): NewCapture {
  return {
    id: `event-${token}`,
    token,
    method: 'POST',
    headers: {},
    query: '',
    body: Buffer.from('{}'),
    bodyText: '{}',
    sourceIp: '127.0.0.1',
    receivedAt: new Date(),
    rulesVersion: 0,
    verdict: {
      authorized: true,
      verification: { status: 'none', reason: null },
      forward: true,
      dedupKey: null,
      skip: [],
    },
    dedupExpiresAt: null,
  };
}

const stored = (token: string): StoreOutcome => ({
  kind: 'stored',
  endpointId: 'endpoint',
  deliveryIds: [`delivery-${token}`],
});

/** A collaborator stub with only the members the test needs. */
const stub = <T>(members: Partial<T>): T => members as T;

/** A repository whose statements the test controls; it records the batches it was given. */
function makeSut(
  store: (captures: NewCapture[]) => Promise<StoreOutcome[]>,
  dispatch: (deliveryIds: readonly string[]) => Promise<void> = async () => undefined,
) {
  const batches: string[][] = [];
  const enqueued: string[] = [];
  const close = jest.fn(async () => undefined);
  const repository = stub<CaptureRepository>({
    storeBatch: (captures) => {
      batches.push(captures.map((item) => item.token));
      return store(captures);
    },
    close,
  });
  const queue = stub<DeliveryQueue>({
    dispatch: (deliveryIds) => {
      enqueued.push(...deliveryIds);
      return dispatch(deliveryIds);
    },
  });
  const config = stub<ConfigService<Environment, true>>({ get: () => 2000 as never });
  const metrics = stub<Metrics>({ gauge: () => undefined });
  return { sut: new CaptureWriter(repository, queue, config, metrics), batches, enqueued, close };
}

/** Writes the capture of `token` with a deadline far enough ahead never to matter here. */
const write = (sut: CaptureWriter, token: string) => sut.write(capture(token), Date.now() + 60_000);

const rowError = Object.assign(
  new Error('insert or update on table "deliveries" violates foreign key constraint'),
  { code: '23503' },
);

describe(CaptureWriter.name, () => {
  it('answers each capture with its own outcome and enqueues the batch deliveries once, after the commit', async () => {
    const { sut, batches, enqueued } = makeSut(async (captures) =>
      captures.map((item) => stored(item.token)),
    );
    const outcomes = await Promise.all(['a', 'b', 'c', 'd'].map((token) => write(sut, token)));
    expect(outcomes).toEqual([stored('a'), stored('b'), stored('c'), stored('d')]);
    expect(batches).toEqual([['a'], ['b'], ['c', 'd']]);
    expect(enqueued).toEqual(['delivery-a', 'delivery-b', 'delivery-c', 'delivery-d']);
  });

  it('still answers when the delivery queue (Redis) fails: the sweeper enqueues later', async () => {
    const { sut } = makeSut(
      async (captures) => captures.map((item) => stored(item.token)),
      async () => {
        throw new Error('Redis is down');
      },
    );
    await expect(write(sut, 'a')).resolves.toEqual(stored('a'));
  });

  it('rejects every capture of a batch when PostgreSQL fails', async () => {
    const { sut, enqueued } = makeSut(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    });
    await expect(Promise.all([write(sut, 'a'), write(sut, 'b')])).rejects.toThrow('ECONNREFUSED');
    await expect(write(sut, 'c')).rejects.toThrow('ECONNREFUSED');
    expect(enqueued).toEqual([]);
  });

  it('retries the rows of a batch one by one when one row breaks a constraint, so only that row fails', async () => {
    const { sut, batches } = makeSut(async (captures) => {
      if (captures.some((item) => item.token === 'bad')) throw rowError;
      return captures.map((item) => stored(item.token));
    });
    // the first write takes one lane alone; the next ones queue up behind the busy lanes and form one batch
    const results = await Promise.all(['first', 'second', 'a', 'bad', 'b'].map((token) => write(sut, token)));
    expect(batches).toEqual([['first'], ['second'], ['a', 'bad', 'b'], ['a'], ['bad'], ['b']]);
    expect(results[2]).toEqual(stored('a'));
    expect(results[3]).toEqual({ kind: 'failed', error: rowError });
    expect(results[4]).toEqual(stored('b'));
  });

  it('on shutdown commits what it accepted, then closes the pool once', async () => {
    let release: () => void = () => undefined;
    const { sut, close } = makeSut(
      (captures) =>
        new Promise((resolve) => (release = () => resolve(captures.map((item) => stored(item.token))))),
    );
    const pending = write(sut, 'a');
    const [first, second] = [sut.onApplicationShutdown(), sut.onApplicationShutdown()];
    expect(close).not.toHaveBeenCalled();
    release();
    await Promise.all([first, second]);
    await expect(pending).resolves.toEqual(stored('a'));
    expect(close).toHaveBeenCalledTimes(1);
    await expect(write(sut, 'late')).rejects.toThrow('shutting down');
  });
});
