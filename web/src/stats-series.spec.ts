import { formatMs, formatRate, stackStatuses, statusTotals } from './stats-series';
import type { StatsBucket } from './types';

/** The endpoint page's events chart: buckets stacked by status, and how rates and latencies read. */
describe('statistics: series of the events chart', () => {
  const bucket = (start: string, received: number, delivered: number, failed: number, dead_letter: number) =>
    ({ start, received, delivered, failed, dead_letter }) satisfies StatsBucket;
  const buckets = [
    bucket('2026-11-25T10:00:00.000Z', 1, 10, 2, 0),
    bucket('2026-11-25T11:00:00.000Z', 0, 0, 0, 0),
    bucket('2026-11-25T12:00:00.000Z', 3, 5, 0, 4),
  ];

  it('puts each bucket at its start, in seconds, oldest first', () => {
    expect(stackStatuses(buckets).xs).toEqual([
      Date.parse('2026-11-25T10:00:00.000Z') / 1000,
      Date.parse('2026-11-25T11:00:00.000Z') / 1000,
      Date.parse('2026-11-25T12:00:00.000Z') / 1000,
    ]);
  });

  it('stacks received, delivered, failed, dead letter upwards; the top layer comes first, to be drawn under the rest', () => {
    const { layers, total } = stackStatuses(buckets);
    expect(layers.map((layer) => layer.status)).toEqual(['dead_letter', 'failed', 'delivered', 'received']);
    const byStatus = Object.fromEntries(layers.map((layer) => [layer.status, layer]));
    expect(byStatus.received.tops).toEqual([1, 0, 3]);
    expect(byStatus.delivered.tops).toEqual([11, 0, 8]);
    expect(byStatus.failed.tops).toEqual([13, 0, 8]);
    expect(byStatus.dead_letter.tops).toEqual([13, 0, 12]);
    // Each layer keeps its own counts for the legend.
    expect(byStatus.dead_letter.counts).toEqual([0, 0, 4]);
    expect(byStatus.failed.counts).toEqual([2, 0, 0]);
    // The top of the stack is every event of the bucket.
    expect(total).toBe(25);
  });

  it('adds up each status over the window', () => {
    expect(statusTotals(buckets)).toEqual({ received: 4, delivered: 15, failed: 2, dead_letter: 4 });
    expect(statusTotals([])).toEqual({ received: 0, delivered: 0, failed: 0, dead_letter: 0 });
    expect(stackStatuses([]).total).toBe(0);
  });

  it('reads a success rate as a percentage and a latency in ms or s; none as a dash', () => {
    expect(formatRate(1)).toBe('100 %');
    expect(formatRate(0.9634)).toBe('96.3 %');
    expect(formatRate(0)).toBe('0 %');
    expect(formatRate(null)).toBe('—');
    expect(formatMs(84)).toBe('84 ms');
    expect(formatMs(9999)).toBe('9999 ms');
    expect(formatMs(12_345)).toBe('12.3 s');
    expect(formatMs(null)).toBe('—');
  });
});
