import { CaptureRateLimiter } from './capture-rate-limiter';

describe(CaptureRateLimiter.name, () => {
  it('allows everything without a limit', () => {
    const sut = new CaptureRateLimiter(undefined, () => 0);
    for (let i = 0; i < 1000; i++) expect(sut.tryAcquire('token')).toBe(true);
  });

  it('allows the limit per token in one second, then refuses until the next second', () => {
    let now = 5_000;
    const sut = new CaptureRateLimiter(3, () => now);
    expect([1, 2, 3, 4].map(() => sut.tryAcquire('a'))).toEqual([true, true, true, false]);
    expect(sut.tryAcquire('b')).toBe(true);
    now = 5_999;
    expect(sut.tryAcquire('a')).toBe(false);
    now = 6_000;
    expect(sut.tryAcquire('a')).toBe(true);
  });
});
