/** How long background work (sweeps, re-enqueues) waits for Redis before it gives up until its next run. */
export const BACKGROUND_REDIS_TIMEOUT_MS = 2000;

/** Rejects when `store` has not answered `promise` within `ms` (an outage must not hang the caller). */
export function withTimeout<T>(promise: Promise<T>, ms: number, store: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`${store} did not answer in ${ms} ms`)), ms).unref(),
    ),
  ]);
}

/** Rejects when Redis has not answered `promise` within `ms`. */
export function withRedisTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withTimeout(promise, ms, 'Redis');
}
