import { ConcurrencyWindow } from './concurrency-window';

const options = { max: 100, min: 4, targetDelayMs: 50 };

/** Takes `count` places that are free now. */
async function take(sut: ConcurrencyWindow, count: number): Promise<void> {
  for (let taken = 0; taken < count; taken++) await sut.acquire();
}

describe(ConcurrencyWindow.name, () => {
  it('gives places at once up to its size, then in turn as they are released', async () => {
    const sut = new ConcurrencyWindow({ ...options, max: 2 });
    await take(sut, 2);
    const order: string[] = [];
    const third = sut.acquire().then(() => order.push('third'));
    const fourth = sut.acquire().then(() => order.push('fourth'));
    await Promise.resolve();
    expect(order).toEqual([]);
    sut.release();
    await third;
    expect(order).toEqual(['third']);
    sut.release();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('shrinks by 30 % for each late reading of the event loop, never below its minimum', () => {
    const sut = new ConcurrencyWindow(options);
    sut.observeDelay(51);
    expect(sut.size).toBe(70);
    sut.observeDelay(500);
    expect(sut.size).toBe(49);
    for (let reading = 0; reading < 20; reading++) sut.observeDelay(500);
    expect(sut.size).toBe(4);
  });

  it('grows back by 5 % of its ceiling per calm reading only while it is in full use', async () => {
    const sut = new ConcurrencyWindow(options);
    for (let reading = 0; reading < 20; reading++) sut.observeDelay(500);
    sut.observeDelay(10); // calm, but idle: no reason to grow
    expect(sut.size).toBe(4);
    await take(sut, 4);
    const waiting = sut.acquire();
    sut.observeDelay(10);
    expect(sut.size).toBe(9);
    await waiting; // the new place went to the waiter
    expect(sut.inUse).toBe(5);
    for (let reading = 0; reading < 40; reading++) {
      await take(sut, sut.size - sut.inUse);
      sut.observeDelay(10);
    }
    expect(sut.size).toBe(100);
  });
});
