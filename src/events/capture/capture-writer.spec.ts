import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import type { RoutingSignal } from './routing-signal';
import type { Claim, ClaimRequest, DedupClaims } from '../../ingest/dedup-claims';
import type { Metrics } from '../../metrics/metrics.service';
import type { CaptureRepository, NewCapture, StoreOutcome } from './capture.repository';
import { CaptureWriter } from './capture-writer';

function capture(token: string, dedupKey: string | null = null): NewCapture {
  return {
    id: `event-${token}`,
    token,
    method: 'POST',
    headers: {},
    query: '',
    body: Buffer.from('{}'),
    bodyIsText: true,
    sourceIp: '127.0.0.1',
    receivedAt: new Date(),
    rulesVersion: 0,
    verdict: {
      authorized: true,
      verification: { status: 'none', reason: null },
      forward: true,
      dedupKey,
      skip: [],
    },
    dedup: dedupKey === null ? null : { windowMs: 60_000, heldBy: null, takeOver: false },
  };
}

const stored = (token: string): StoreOutcome => ({ kind: 'stored', endpointId: `endpoint-${token}` });

/** A collaborator stub with only the members the test needs. */
const stub = <T>(members: Partial<T>): T => members as T;

/**
 * Dedup claims kept in a map, as Redis would keep them (a key is held by its first claim), or unavailable;
 * it records the time each call was given and what was released.
 */
function fakeClaims(available = true) {
  const held = new Map<string, Claim>();
  const released: string[] = [];
  const timeouts: number[] = [];
  const claims = stub<DedupClaims>({
    claim: async (asks: (ClaimRequest | null)[], timeoutMs: number) => {
      timeouts.push(timeoutMs);
      if (!available) return null;
      // Redis has held every claim ever made: none is looked up in PostgreSQL.
      const since = Number.NEGATIVE_INFINITY;
      const answered = asks.map((ask) => {
        if (ask === null) return null;
        const claim = held.get(ask.key) ?? {
          value: `${ask.eventId}:1`,
          eventId: ask.eventId,
          claimedAt: 1,
          own: true,
        };
        held.set(ask.key, claim);
        return { ...claim, own: claim.eventId === ask.eventId };
      });
      return { claims: answered, epoch: 'run:0', since, began: false };
    },
    release: async (claims) => {
      for (const { ask } of claims) {
        released.push(ask.key);
        held.delete(ask.key);
      }
    },
  });
  return { claims, released, timeouts };
}

/**
 * A repository whose statements the test controls; it records the batches it was given (each capture's
 * token, and `<token>→<first id>` for a repeat), the keys looked up in its record of dedup keys (where only
 * `recorded` was stored, by `event-recorded`), and announcements.
 */
function makeSut(
  store: (captures: NewCapture[], firstIds: (string | null)[]) => Promise<StoreOutcome[]>,
  claims = fakeClaims().claims,
) {
  const batches: string[][] = [];
  const lookedUp: string[][] = [];
  const close = jest.fn(async () => undefined);
  const repository = stub<CaptureRepository>({
    storeBatch: (captures, firstIds) => {
      batches.push(
        captures.map((item, index) =>
          firstIds[index] === null ? item.token : `${item.token}→${firstIds[index]}`,
        ),
      );
      return store(captures, firstIds);
    },
    findDedupEvents: async (asks) => {
      lookedUp.push(asks.map((ask) => ask.key));
      return asks.map((ask) =>
        ask.key === 'recorded' ? { eventId: 'event-recorded', receivedAt: 5 } : null,
      );
    },
    close,
  });
  const announce = jest.fn();
  const routing = stub<RoutingSignal>({ announce });
  const config = stub<ConfigService<Environment, true>>({ get: () => 2000 as never });
  const metrics = stub<Metrics>({ gauge: () => undefined });
  return {
    sut: new CaptureWriter(repository, routing, claims, config, metrics),
    batches,
    lookedUp,
    announce,
    close,
  };
}

/** Writes the capture of `token` with a deadline far enough ahead never to matter here. */
const write = (sut: CaptureWriter, token: string) => sut.write(capture(token), Date.now() + 60_000);

const rowError = Object.assign(
  new Error('insert or update on table "events" violates foreign key constraint'),
  { code: '23503' },
);

describe(CaptureWriter.name, () => {
  it('answers each capture with its own outcome and tells the routers once a batch, after its commit', async () => {
    const { sut, batches, announce } = makeSut(async (captures) =>
      captures.map((item) => stored(item.token)),
    );
    const outcomes = await Promise.all(['a', 'b', 'c', 'd'].map((token) => write(sut, token)));
    expect(outcomes).toEqual([stored('a'), stored('b'), stored('c'), stored('d')]);
    expect(batches).toEqual([['a'], ['b'], ['c', 'd']]);
    expect(announce).toHaveBeenCalledTimes(3);
  });

  it('tells the routers only once the batch is committed', async () => {
    let commit: () => void = () => undefined;
    const { sut, announce } = makeSut(
      (captures) =>
        new Promise((resolve) => (commit = () => resolve(captures.map((item) => stored(item.token))))),
    );
    const pending = write(sut, 'a');
    await new Promise((resolve) => setImmediate(resolve));
    expect(announce).not.toHaveBeenCalled();
    commit();
    await expect(pending).resolves.toEqual(stored('a'));
    expect(announce).toHaveBeenCalledTimes(1);
  });

  it('tells the routers nothing for a batch that stored no event', async () => {
    const { sut, announce } = makeSut(async (captures) =>
      captures.map(() => ({ kind: 'unknown-endpoint' as const })),
    );
    await expect(write(sut, 'a')).resolves.toEqual({ kind: 'unknown-endpoint' });
    expect(announce).not.toHaveBeenCalled();
  });

  it('rejects every capture of a batch when PostgreSQL fails', async () => {
    const { sut, announce } = makeSut(async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    });
    await expect(Promise.all([write(sut, 'a'), write(sut, 'b')])).rejects.toThrow('ECONNREFUSED');
    await expect(write(sut, 'c')).rejects.toThrow('ECONNREFUSED');
    expect(announce).not.toHaveBeenCalled();
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

  it('writes no row of a batch retried row by row once its start-by time has passed', async () => {
    const { sut, batches } = makeSut(async (captures) => {
      if (captures.some((item) => item.token === 'bad')) throw rowError;
      if (captures[0].token === 'slow') await new Promise((resolve) => setTimeout(resolve, 1500));
      return captures.map((item) => stored(item.token));
    });
    // A capture timeout of 2 s (the stub's config) allows 1 s for the commit: these must start within 1 s,
    // and the first row alone takes 1.5 s.
    const soon = (token: string) => sut.write(capture(token), Date.now() + 2000);
    const results = await Promise.all([
      write(sut, 'first'),
      write(sut, 'second'),
      soon('slow'),
      soon('bad'),
      soon('b'),
    ]);
    expect(batches).toEqual([['first'], ['second'], ['slow', 'bad', 'b'], ['slow']]);
    expect(results.slice(2)).toEqual([stored('slow'), { kind: 'expired' }, { kind: 'expired' }]);
  });

  describe('dedup claims', () => {
    /** Stores each capture but the repeats, which are duplicates of their first event (or pending, for `pending`). */
    const storeFirsts =
      (pending = false) =>
      async (captures: NewCapture[], firstIds: (string | null)[]): Promise<StoreOutcome[]> =>
        captures.map((item, index) => {
          const firstId = firstIds[index];
          if (firstId === null) return stored(item.token);
          return pending ? { kind: 'first-pending' } : { kind: 'duplicate', firstId };
        });

    it("claims a batch's keys before storing it, and gives the repository each repeat's first event", async () => {
      const { sut, batches } = makeSut(storeFirsts());
      const outcomes = await Promise.all([
        sut.write(capture('first', 'k1'), Date.now() + 60_000),
        sut.write(capture('second', 'k2'), Date.now() + 60_000),
        sut.write(capture('a', 'k1'), Date.now() + 60_000),
        sut.write(capture('b'), Date.now() + 60_000),
        sut.write(capture('c', 'k3'), Date.now() + 60_000),
      ]);
      expect(batches).toEqual([['first'], ['second'], ['a→event-first', 'b', 'c']]);
      expect(outcomes[2]).toEqual({ kind: 'duplicate', firstId: 'event-first' });
      expect(outcomes[4]).toEqual(stored('c'));
    });

    it('answers a repeat whose first event is not committed with that claim, to be sent again', async () => {
      const { sut } = makeSut(storeFirsts(true));
      await write(sut, 'first');
      await sut.write(capture('first', 'k'), Date.now() + 60_000);
      await expect(sut.write(capture('again', 'k'), Date.now() + 60_000)).resolves.toEqual({
        kind: 'first-pending',
        claim: { value: 'event-first:1', eventId: 'event-first', claimedAt: 1, own: false },
      });
    });

    it('releases the claims of the captures it did not store, and all of a batch that failed', async () => {
      const { claims, released } = fakeClaims();
      let fail = false;
      const { sut } = makeSut(async (captures) => {
        if (fail) throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        return captures.map((item) =>
          item.token === 'unknown' ? { kind: 'unknown-endpoint' as const } : stored(item.token),
        );
      }, claims);
      await sut.write(capture('kept', 'k1'), Date.now() + 60_000);
      await sut.write(capture('unknown', 'k2'), Date.now() + 60_000);
      fail = true;
      await expect(sut.write(capture('lost', 'k3'), Date.now() + 60_000)).rejects.toThrow('ECONNREFUSED');
      expect(released).toEqual(['k2', 'k3']);
    });

    it('gives the claims only the time left before the batch must start', async () => {
      const { claims, timeouts } = fakeClaims();
      const { sut } = makeSut(storeFirsts(), claims);
      // A capture timeout of 2 s (the stub's config) allows 1 s for the commit: the batch must start within 1 s.
      await sut.write(capture('a', 'k'), Date.now() + 2000);
      expect(timeouts).toHaveLength(1);
      expect(timeouts[0]).toBeGreaterThan(900);
      expect(timeouts[0]).toBeLessThanOrEqual(1000);
    });

    it('keeps a repeat on the claim it found holding its key when Redis cannot answer', async () => {
      const { sut, batches } = makeSut(storeFirsts(true), fakeClaims(false).claims);
      const repeat = capture('again', 'k');
      repeat.dedup = { windowMs: 60_000, heldBy: 'event-first:1', takeOver: false };
      await expect(sut.write(repeat, Date.now() + 60_000)).resolves.toEqual({
        kind: 'first-pending',
        claim: { value: 'event-first:1', eventId: 'event-first', claimedAt: 1, own: false },
      });
      expect(batches).toEqual([['again→event-first']]);
    });

    it("stores a batch without claims when its keys cannot be claimed, but by PostgreSQL's record", async () => {
      const { sut, batches, lookedUp } = makeSut(storeFirsts(), fakeClaims(false).claims);
      await sut.write(capture('first', 'k'), Date.now() + 60_000);
      await expect(sut.write(capture('again', 'k'), Date.now() + 60_000)).resolves.toEqual(stored('again'));
      await expect(sut.write(capture('repeat', 'recorded'), Date.now() + 60_000)).resolves.toEqual({
        kind: 'duplicate',
        firstId: 'event-recorded',
      });
      expect(batches).toEqual([['first'], ['again'], ['repeat→event-recorded']]);
      expect(lookedUp).toEqual([['k'], ['k'], ['recorded']]);
    });
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
