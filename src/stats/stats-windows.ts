/** The windows of an endpoint's statistics, and the bucket each is drawn in. */
export const STATS_WINDOWS = ['1h', '24h', '7d', '30d'] as const;
export type StatsWindow = (typeof STATS_WINDOWS)[number];
export const DEFAULT_STATS_WINDOW: StatsWindow = '24h';

/** The granularities the counters are kept in (see the endpoint_stats migration). */
export type StatsSpan = 'minute' | 'hour' | 'day';

export interface WindowShape {
  /** The counter rows it is summed from. */
  span: StatsSpan;
  bucketMs: number;
  buckets: number;
}

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * Minute rows are kept this long (the worker deletes older ones): the 1h window reads the last hour of them,
 * and an attempt or status change recorded a little late still finds its row.
 */
export const MINUTE_ROWS_KEPT_MS = 2 * HOUR;

/**
 * 1h: 60 minutes; 24h: 24 hours; 7d: 28 quarters of a day (six hours, from 00:00, 06:00, 12:00 and
 * 18:00 UTC: enough points to draw a week, few enough to read); 30d: 30 UTC days. The last bucket is the
 * one now is in (still filling).
 */
export const WINDOW_SHAPES: Record<StatsWindow, WindowShape> = {
  '1h': { span: 'minute', bucketMs: MINUTE, buckets: 60 },
  '24h': { span: 'hour', bucketMs: HOUR, buckets: 24 },
  '7d': { span: 'hour', bucketMs: 6 * HOUR, buckets: 28 },
  '30d': { span: 'day', bucketMs: DAY, buckets: 30 },
};

/** The start of each bucket of the window at `now`, oldest first (aligned on UTC, from the epoch). */
export function bucketStarts(shape: WindowShape, now: number): number[] {
  const last = Math.floor(now / shape.bucketMs) * shape.bucketMs;
  return Array.from(
    { length: shape.buckets },
    (_, index) => last - (shape.buckets - 1 - index) * shape.bucketMs,
  );
}
