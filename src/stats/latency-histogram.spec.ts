import { LATENCY_CELLS, latencyCellOf, latencyOfCell, percentileOf } from './latency-histogram';

describe('latency histogram', () => {
  it('reads every duration back within 9 % of (d + 1) and half a millisecond of rounding', () => {
    for (let duration = 0; duration < 200_000; duration += duration < 1000 ? 1 : 97) {
      const read = latencyOfCell(latencyCellOf(duration));
      expect(Math.abs(read - duration)).toBeLessThanOrEqual(0.0906 * (duration + 1) + 0.5);
    }
    expect(latencyCellOf(10_000_000)).toBe(LATENCY_CELLS - 1);
    expect(latencyCellOf(-5)).toBe(0);
  });

  it('takes the cell of the ceil(p % · n)-th smallest duration', () => {
    const durations = [5, 5, 5, 5, 5, 5, 5, 5, 5, 400, 80, 80, 80, 80, 80, 80, 80, 80, 80, 2000];
    const cells = new Map<number, number>();
    for (const duration of durations) {
      const cell = latencyCellOf(duration);
      cells.set(cell, (cells.get(cell) ?? 0) + 1);
    }
    expect(percentileOf(cells, 45)).toBe(latencyOfCell(latencyCellOf(5)));
    expect(percentileOf(cells, 50)).toBe(latencyOfCell(latencyCellOf(80)));
    expect(percentileOf(cells, 95)).toBe(latencyOfCell(latencyCellOf(400)));
    expect(percentileOf(cells, 100)).toBe(latencyOfCell(latencyCellOf(2000)));
    expect(percentileOf(new Map(), 50)).toBeNull();
  });
});
