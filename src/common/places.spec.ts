import { Places } from './places';

describe(Places.name, () => {
  it('gives places at once up to its size, then in turn as they are released', async () => {
    const sut = new Places(2);
    await sut.acquire();
    await sut.acquire();
    const order: string[] = [];
    const third = sut.acquire().then(() => order.push('third'));
    const fourth = sut.acquire().then(() => order.push('fourth'));
    await Promise.resolve();
    expect(order).toEqual([]);
    sut.release();
    await third;
    expect(order).toEqual(['third']);
    expect(sut.inUse).toBe(2);
    sut.release();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('counts a place given back with no one waiting as free again', async () => {
    const sut = new Places(1);
    await sut.acquire();
    sut.release();
    expect(sut.inUse).toBe(0);
    await sut.acquire();
    expect(sut.inUse).toBe(1);
  });

  it('gives a place released to work waiting ahead before work waiting in turn', async () => {
    const sut = new Places(1);
    await sut.acquire();
    const order: string[] = [];
    const inTurn = sut.acquire().then(() => order.push('in turn'));
    const ahead = sut.acquireAhead().then(() => order.push('ahead'));
    sut.release();
    await ahead;
    sut.release();
    await inTurn;
    expect(order).toEqual(['ahead', 'in turn']);
  });

  it('runs work on a place and gives it back when the work settles, failed or not', async () => {
    const sut = new Places(1);
    let finish: (value: string) => void = () => undefined;
    const first = sut.run(() => new Promise<string>((resolve) => (finish = resolve)));
    const second = sut.run(() => Promise.reject(new Error('failed')));
    const third = sut.run(() => Promise.resolve('third'));
    await Promise.resolve();
    expect(sut.inUse).toBe(1);
    finish('first');
    await expect(first).resolves.toBe('first');
    await expect(second).rejects.toThrow('failed');
    await expect(third).resolves.toBe('third');
    expect(sut.inUse).toBe(0);
  });
});
