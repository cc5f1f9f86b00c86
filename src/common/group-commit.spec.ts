import {
  GroupCommit,
  GroupCommitClosedError,
  GroupCommitDeadlineError,
  GroupCommitFullError,
} from './group-commit';

interface Deferred {
  items: number[];
  resolve(results: string[]): void;
  reject(error: Error): void;
}

/** A commit function whose calls the test settles by hand. */
function manualCommit() {
  const calls: Deferred[] = [];
  const commit = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => calls.push({ items, resolve, reject }));
  return { calls, commit };
}

const options = { maxInFlight: 2, maxBatchItems: 3, maxBatchBytes: 100, sizeOf: (item: number) => item };

describe(GroupCommit.name, () => {
  it('commits a lone item at once, without waiting for company', async () => {
    const { calls, commit } = manualCommit();
    const sut = new GroupCommit(commit, options);
    const result = sut.submit(1);
    expect(calls.map((call) => call.items)).toEqual([[1]]);
    calls[0].resolve(['one']);
    await expect(result).resolves.toBe('one');
  });

  it('batches what arrives while every slot is busy, within the item and byte caps', async () => {
    const { calls, commit } = manualCommit();
    const sut = new GroupCommit(commit, options);
    const results = [1, 2, 3, 4, 5, 6, 90, 20].map((item) => sut.submit(item));
    expect(calls.map((call) => call.items)).toEqual([[1], [2]]);
    calls[0].resolve(['r1']);
    await results[0];
    expect(calls.map((call) => call.items)).toEqual([[1], [2], [3, 4, 5]]);
    calls[1].resolve(['r2']);
    await results[1];
    // 6 + 90 fit in 100 bytes; 20 more would not
    expect(calls[3].items).toEqual([6, 90]);
    calls[2].resolve(['r3', 'r4', 'r5']);
    await expect(Promise.all(results.slice(2, 5))).resolves.toEqual(['r3', 'r4', 'r5']);
    expect(calls[4].items).toEqual([20]);
  });

  it('rejects every item of a failed batch, and only those', async () => {
    const { calls, commit } = manualCommit();
    const sut = new GroupCommit(commit, { ...options, maxInFlight: 1 });
    const first = sut.submit(1);
    const [second, third] = [sut.submit(2), sut.submit(3)];
    calls[0].resolve(['ok']);
    await expect(first).resolves.toBe('ok');
    calls[1].reject(new Error('database is down'));
    await expect(second).rejects.toThrow('database is down');
    await expect(third).rejects.toThrow('database is down');
  });

  it('on close, commits what was submitted and refuses new items', async () => {
    const { calls, commit } = manualCommit();
    const sut = new GroupCommit(commit, { ...options, maxInFlight: 1 });
    const pending = [sut.submit(1), sut.submit(2)];
    let closed = false;
    const closing = sut.close().then(() => (closed = true));
    await expect(sut.submit(3)).rejects.toBeInstanceOf(GroupCommitClosedError);
    calls[0].resolve(['a']);
    await pending[0];
    expect(closed).toBe(false);
    calls[1].resolve(['b']);
    await closing;
    await expect(pending[1]).resolves.toBe('b');
  });

  describe('with a linger', () => {
    beforeEach(() => jest.useFakeTimers({ now: 0 }));
    afterEach(() => jest.useRealTimers());

    it('a free slot waits until as many items wait as each batch committing holds, or for the linger', async () => {
      const { calls, commit } = manualCommit();
      const sut = new GroupCommit(commit, { ...options, maxBatchItems: 10, lingerMs: 4 });
      const first = sut.submit(1); // nothing commits: it goes at once
      const second = sut.submit(2); // as many wait (one) as the batch committing holds
      const third = [3, 4, 5].map((item) => sut.submit(item));
      expect(calls.map((call) => call.items)).toEqual([[1], [2]]);
      calls[0].resolve(['1']);
      await first;
      expect(calls[2].items).toEqual([3, 4, 5]);
      calls[1].resolve(['2']);
      await second;

      // [3, 4, 5] commits and a slot is free: one item waits for company...
      const company = [sut.submit(6)];
      jest.advanceTimersByTime(3);
      expect(calls).toHaveLength(3);
      // ...and goes once three wait, as many as the batch committing holds
      company.push(sut.submit(7), sut.submit(8));
      expect(calls[3].items).toEqual([6, 7, 8]);

      calls[2].resolve(['3', '4', '5']);
      await expect(Promise.all(third)).resolves.toEqual(['3', '4', '5']);
      const alone = sut.submit(9);
      jest.advanceTimersByTime(3);
      expect(calls).toHaveLength(4);
      jest.advanceTimersByTime(1); // its linger is over: it goes alone
      expect(calls[4].items).toEqual([9]);
      calls[3].resolve(['6', '7', '8']);
      calls[4].resolve(['9']);
      await expect(Promise.all([...company, alone])).resolves.toEqual(['6', '7', '8', '9']);
    });

    it('a waiting item goes at once when the batch it waited beside ends', async () => {
      const { calls, commit } = manualCommit();
      const sut = new GroupCommit(commit, { ...options, maxBatchItems: 10, lingerMs: 4 });
      const batches = [sut.submit(1), sut.submit(2)];
      const big = [3, 4, 5].map((item) => sut.submit(item));
      calls[0].resolve(['1']);
      calls[1].resolve(['2']);
      await Promise.all(batches);
      const lone = sut.submit(6);
      expect(calls).toHaveLength(3);
      calls[2].resolve(['3', '4', '5']);
      await Promise.all(big);
      expect(calls[3].items).toEqual([6]); // nothing commits any more: no reason to wait
      calls[3].resolve(['6']);
      await expect(lone).resolves.toBe('6');
    });
  });

  describe('admission', () => {
    beforeEach(() => jest.useFakeTimers({ now: 0 }));
    afterEach(() => jest.useRealTimers());

    it('refuses at once what would overflow the waiting items or bytes, but never a lone item', async () => {
      const { calls, commit } = manualCommit();
      const sut = new GroupCommit(commit, {
        ...options,
        maxInFlight: 1,
        maxWaitingItems: 2,
        maxWaitingBytes: 50,
      });
      const huge = sut.submit(500); // nothing waits: it goes, whatever its size
      const waiting = [sut.submit(10), sut.submit(20)];
      await expect(sut.submit(1)).rejects.toBeInstanceOf(GroupCommitFullError);
      calls[0].resolve(['huge']);
      await huge;
      // the two waiting items went as one batch: the queue has room again, but not for 60 bytes
      expect(calls[1].items).toEqual([10, 20]);
      const [fits, tooBig] = [sut.submit(40), sut.submit(60)];
      await expect(tooBig).rejects.toBeInstanceOf(GroupCommitFullError);
      calls[1].resolve(['a', 'b']);
      await expect(Promise.all(waiting)).resolves.toEqual(['a', 'b']);
      expect(calls[2].items).toEqual([40]);
      calls[2].resolve(['c']);
      await expect(fits).resolves.toBe('c');
    });

    it('refuses, and never commits, an item that could not start its commit within its allowance', async () => {
      const { calls, commit } = manualCommit();
      const sut = new GroupCommit(commit, { ...options, maxInFlight: 1 });
      const deadline = { answerBy: 2000, commitAllowanceMs: 1000 };
      const first = sut.submit(1, deadline);
      const late = sut.submit(2, deadline);
      jest.advanceTimersByTime(999);
      calls[0].resolve(['one']);
      await expect(first).resolves.toBe('one');
      expect(calls.map((call) => call.items)).toEqual([[1], [2]]); // started at 999 ms: in time
      const waiting = sut.submit(3, { answerBy: 2500, commitAllowanceMs: 1000 });
      jest.advanceTimersByTime(502); // 1,501 ms: item 3 should have started by 1,500
      await expect(waiting).rejects.toEqual(new GroupCommitDeadlineError('no'));
      calls[1].resolve(['two']);
      await expect(late).resolves.toBe('two');
      expect(calls).toHaveLength(2);
    });

    it('answers the items of a batch still committing at their deadline, and ignores its late result', async () => {
      const { calls, commit } = manualCommit();
      const sut = new GroupCommit(commit, { ...options, maxInFlight: 1 });
      const stuck = sut.submit(1, { answerBy: 2000, commitAllowanceMs: 1000 });
      jest.advanceTimersByTime(2000);
      await expect(stuck).rejects.toEqual(new GroupCommitDeadlineError('unknown'));
      const next = sut.submit(2);
      calls[0].resolve(['too late']);
      await Promise.resolve();
      expect(calls[1].items).toEqual([2]); // the lane is free again once the commit returned
      calls[1].resolve(['two']);
      await expect(next).resolves.toBe('two');
    });
  });
});
