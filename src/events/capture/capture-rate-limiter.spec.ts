import type { SharedCount } from '../../redis/shared-counter';
import { CaptureRateLimiter } from './capture-rate-limiter';

/** A counter two limiters share, as two processes share Redis's. */
function sharedCounts(): SharedCount {
  const totals = new Map<string, number>();
  return async (key) => {
    totals.set(key, (totals.get(key) ?? 0) + 1);
    return totals.get(key) as number;
  };
}

const unreachable: SharedCount = () => Promise.reject(new Error('Redis is reconnecting'));

async function attempts(sut: CaptureRateLimiter, token: string, count: number): Promise<boolean[]> {
  const answers = [];
  for (let i = 0; i < count; i++) answers.push(await sut.tryAcquire(token));
  return answers;
}

describe(CaptureRateLimiter.name, () => {
  it('allows everything without a limit, counting nothing', async () => {
    const count = jest.fn(sharedCounts());
    const sut = new CaptureRateLimiter(undefined, count, () => 0);
    expect(await attempts(sut, 'token', 1000)).not.toContain(false);
    expect(count).not.toHaveBeenCalled();
  });

  it('shares the limit per token and second between processes, then refuses until the next second', async () => {
    let now = 5_000;
    const counts = sharedCounts();
    const [one, two] = [
      new CaptureRateLimiter(3, counts, () => now),
      new CaptureRateLimiter(3, counts, () => now),
    ];
    expect([...(await attempts(one, 'a', 2)), ...(await attempts(two, 'a', 2))]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(await two.tryAcquire('b')).toBe(true);
    now = 5_999;
    expect(await one.tryAcquire('a')).toBe(false);
    now = 6_000;
    expect(await one.tryAcquire('a')).toBe(true);
  });

  it('counts in its own memory while Redis does not answer', async () => {
    let now = 5_000;
    const sut = new CaptureRateLimiter(3, unreachable, () => now);
    expect(await attempts(sut, 'a', 4)).toEqual([true, true, true, false]);
    expect(await sut.tryAcquire('b')).toBe(true);
    now = 6_000;
    expect(await sut.tryAcquire('a')).toBe(true);
  });
});
