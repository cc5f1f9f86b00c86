import { withTimeout } from './with-timeout';

/** How long background work (sweeps, re-enqueues) waits for Redis before it gives up until its next run. */
export const BACKGROUND_REDIS_TIMEOUT_MS = 2000;

/** Rejects when Redis has not answered `promise` within `ms`. */
export function withRedisTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return withTimeout(promise, ms, 'Redis');
}
