import { withTimeout } from './with-timeout';

describe('withTimeout', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('answers what the promise answers, and leaves no timer behind', async () => {
    await expect(withTimeout(Promise.resolve('pong'), 2000, 'Redis')).resolves.toBe('pong');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('passes the failure of the promise on, and leaves no timer behind', async () => {
    await expect(withTimeout(Promise.reject(new Error('refused')), 2000, 'Redis')).rejects.toThrow('refused');
    expect(jest.getTimerCount()).toBe(0);
  });

  it('rejects naming the store once `ms` have passed without an answer', async () => {
    const answer = withTimeout(new Promise<never>(() => undefined), 2000, 'PostgreSQL');
    jest.advanceTimersByTime(1999);
    const settled = jest.fn();
    void answer.then(settled, settled);
    await Promise.resolve();
    expect(settled).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    await expect(answer).rejects.toThrow('PostgreSQL did not answer in 2000 ms');
    expect(jest.getTimerCount()).toBe(0);
  });
});
