import {
  continuationOf,
  DeferredDeliveryError,
  deliveryBackoff,
  deliveryJobOptions,
  dispatchJobOptions,
  RetryableDeliveryError,
  retryDelay,
} from './delivery-jobs';

const DELAYS = [5000, 25000, 120000, 600000];

describe('retry schedule', () => {
  it.each([
    [1, 5000],
    [2, 25000],
    [3, 120000],
    [4, 600000],
  ])('waits about %#th delay before retry %i, within ±10 %%', (attemptsMade, base) => {
    for (let sample = 0; sample < 200; sample++) {
      const delay = retryDelay(DELAYS, attemptsMade);
      expect(delay).toBeGreaterThanOrEqual(base * 0.9);
      expect(delay).toBeLessThanOrEqual(base * 1.1);
    }
  });

  it('continues the schedule of a delivery re-enqueued after attempts were made', () => {
    const delay = retryDelay(DELAYS, 1, { priorAttempts: 2 });
    expect(delay).toBeGreaterThanOrEqual(120000 * 0.9);
    expect(delay).toBeLessThanOrEqual(120000 * 1.1);
  });

  it('gives a new delivery 5 attempts and a re-enqueued one only what is left, each with room for deferrals', () => {
    expect(deliveryJobOptions('id', DELAYS)).toMatchObject({ jobId: 'id', attempts: 5 + 10_000, delay: 0 });
    expect(deliveryJobOptions('id', DELAYS, 3)).toMatchObject({
      attempts: 2 + 10_000,
      backoff: { options: { priorAttempts: 3 } },
    });
  });

  it('waits after a failed attempt by the delivery’s attempt count, whatever deferrals the job had', () => {
    // The job ran 7 times (5 of them deferred) but the delivery made 2 attempts: the second retry delay.
    const delay = deliveryBackoff(DELAYS, 7, new RetryableDeliveryError('id', 2));
    expect(delay).toBeGreaterThanOrEqual(25000 * 0.9);
    expect(delay).toBeLessThanOrEqual(25000 * 1.1);
  });

  it('waits what a deferral asks, and by the run count after any other error', () => {
    expect(deliveryBackoff(DELAYS, 3, new DeferredDeliveryError('id', 1234))).toBe(1234);
    const delay = deliveryBackoff(DELAYS, 1, new Error('connection terminated'), { priorAttempts: 2 });
    expect(delay).toBeGreaterThanOrEqual(120000 * 0.9);
    expect(delay).toBeLessThanOrEqual(120000 * 1.1);
  });

  it('forgets completed jobs at once and bounds the failed ones Redis keeps', () => {
    const options = deliveryJobOptions('id', DELAYS);
    expect(options.removeOnComplete).toBe(true);
    expect(options.removeOnFail).toEqual({ age: 3600, count: 1000 });
  });
});

describe('dispatch jobs', () => {
  it('are named after their first delivery and run once', () => {
    expect(dispatchJobOptions(['a', 'b'])).toMatchObject({ jobId: 'dispatch:a', attempts: 1 });
  });

  it('hand a failed first attempt on to its own job, due after the first retry delay', () => {
    const next = continuationOf('id', new RetryableDeliveryError('id', 1), DELAYS);
    expect(next).toMatchObject({ id: 'id', priorAttempts: 1 });
    expect(next.delayMs).toBeGreaterThanOrEqual(5000 * 0.9);
    expect(next.delayMs).toBeLessThanOrEqual(5000 * 1.1);
    expect(next.deferred).toBeUndefined();
  });

  it('hand a deferral on as it asks, marked deferred; any other error after the first retry delay', () => {
    expect(continuationOf('id', new DeferredDeliveryError('id', 1234), DELAYS)).toEqual({
      id: 'id',
      priorAttempts: 0,
      delayMs: 1234,
      deferred: true,
    });
    const next = continuationOf('id', new Error('connection terminated'), DELAYS);
    expect(next).toMatchObject({ id: 'id', priorAttempts: 0 });
    expect(next.delayMs).toBeGreaterThanOrEqual(5000 * 0.9);
  });
});
