/**
 * The attempts' latency histogram kept by the database (see the endpoint_stats migration): cell i counts
 * the durations d (ms) with 4·log2(d + 1) in [i, i + 1), and the last cell everything longer (about 221 s
 * and more, past any delivery time-out). A cell spans a factor 2^(1/4) of (d + 1), so the value read for
 * it, the geometric middle, is within 2^(1/8) - 1 ≈ 9 % of (d + 1) for every duration it holds (rounded to the millisecond).
 */
export const LATENCY_CELLS = 72;

/** The cell of a duration, as the database computes it (stats_latency_cell). */
export function latencyCellOf(durationMs: number): number {
  return Math.min(LATENCY_CELLS - 1, Math.floor(4 * Math.log2(Math.max(durationMs, 0) + 1)));
}

/** The duration a cell stands for (ms, whole). */
export function latencyOfCell(cell: number): number {
  return Math.round(2 ** ((cell + 0.5) / 4) - 1);
}

/**
 * The p-th percentile (0 < p ≤ 100) of the durations counted in `cells` (cell index → count): the value of
 * the cell holding the ceil(p % · n)-th smallest duration. Null when nothing is counted.
 */
export function percentileOf(cells: ReadonlyMap<number, number>, p: number): number | null {
  const total = [...cells.values()].reduce((sum, count) => sum + count, 0);
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (const cell of [...cells.keys()].sort((a, b) => a - b)) {
    seen += cells.get(cell) ?? 0;
    if (seen >= rank) return latencyOfCell(cell);
  }
  return latencyOfCell(LATENCY_CELLS - 1);
}
