import { atMostEvery } from './at-most-every';

describe(atMostEvery.name, () => {
  it('is due at the first call, then once the interval has passed since the last time it was due', () => {
    const gate = atMostEvery(10_000);
    expect([0, 5_000, 9_999, 10_000, 19_999, 20_000].map((now) => gate.due(now))).toEqual([
      true,
      false,
      false,
      true,
      false,
      true,
    ]);
  });
});
