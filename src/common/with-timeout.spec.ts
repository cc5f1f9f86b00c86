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
    const settled = jest.fn();
    answer.then(settled, settled);
    // The async form lets every promise that the timers settle run its callbacks before it returns.
    await jest.advanceTimersByTimeAsync(1999);
    expect(settled).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(settled).toHaveBeenCalledWith(new Error('PostgreSQL did not answer in 2000 ms'));
    expect(jest.getTimerCount()).toBe(0);
  });
});
