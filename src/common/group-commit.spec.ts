import { GroupCommit, GroupCommitClosedError } from './group-commit';

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
});
