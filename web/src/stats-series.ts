import type { StatsBucket, StatsWindow } from './types';

export type BucketStatus = Exclude<keyof StatsBucket, 'start'>;

/** The statuses of the events chart, bottom of the stack first, with their colours (those of the badges). */
export const STATUS_LAYERS: readonly { status: BucketStatus; label: string; color: string }[] = [
  { status: 'received', label: 'Received', color: '#3b82f6' },
  { status: 'delivered', label: 'Delivered', color: '#16a34a' },
  { status: 'failed', label: 'Failed', color: '#ea580c' },
  { status: 'dead_letter', label: 'Dead letter', color: '#b91c1c' },
];

export const WINDOW_TEXT: Record<StatsWindow, string> = {
  '1h': 'Last hour',
  '24h': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
};

export interface StackLayer {
  status: BucketStatus;
  label: string;
  color: string;
  /** The count of this status in each bucket. */
  counts: number[];
  /** Where its bar ends in each bucket: its count plus those of the layers under it. */
  tops: number[];
}

export interface StackedSeries {
  /** Each bucket's start, in seconds since the epoch (uPlot's time scale). */
  xs: number[];
  /** Top of the stack first: each layer's bar is drawn from 0 to its top, over the ones drawn before. */
  layers: StackLayer[];
  total: number;
}

/**
 * The events per bucket stacked by status, shaped for a chart that draws each layer as bars from zero:
 * drawn top layer first, each lower layer painted over it, the bars read as one stack per bucket.
 */
export function stackStatuses(buckets: readonly StatsBucket[]): StackedSeries {
  const xs = buckets.map((bucket) => Date.parse(bucket.start) / 1000);
  const running = buckets.map(() => 0);
  const bottomUp = STATUS_LAYERS.map(({ status, label, color }) => {
    const counts = buckets.map((bucket) => bucket[status]);
    const tops = counts.map((count, index) => (running[index] += count));
    return { status, label, color, counts, tops };
  });
  return { xs, layers: bottomUp.reverse(), total: running.reduce((sum, n) => sum + n, 0) };
}

/** The events of each status over the whole window. */
export function statusTotals(buckets: readonly StatsBucket[]): Record<BucketStatus, number> {
  const totals: Record<BucketStatus, number> = { received: 0, delivered: 0, failed: 0, dead_letter: 0 };
  for (const bucket of buckets) {
    for (const { status } of STATUS_LAYERS) totals[status] += bucket[status];
  }
  return totals;
}

/** A success rate (0 to 1) as a percentage, one decimal unless whole; an em dash for none. */
export function formatRate(rate: number | null): string {
  if (rate === null) return '—';
  const percent = Math.round(rate * 1000) / 10;
  return `${Number.isInteger(percent) ? percent.toFixed(0) : percent.toFixed(1)} %`;
}

/** A duration in ms, or in seconds from 10 s up; an em dash for none. */
export function formatMs(ms: number | null): string {
  if (ms === null) return '—';
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`;
}
