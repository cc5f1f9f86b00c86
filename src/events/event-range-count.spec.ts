import { DAY, HOUR, MINUTE, MINUTE_ROWS_KEPT_MS } from '../stats/stats-windows';
import { type BucketRun, coverRange } from './event-range-count';

const LENGTH = { day: DAY, hour: HOUR, minute: MINUTE };
const NOW = Date.parse('2026-11-29T10:17:23.456Z');

/** The pieces of a cover as time intervals, in order. */
function pieces(from: number | undefined, to: number | undefined) {
  const { runs, gaps } = coverRange(from, to, NOW);
  return [
    ...runs.map((run: BucketRun) => ({
      kind: run.span,
      from: run.from ?? -Infinity,
      to: run.to ?? Infinity,
    })),
    ...gaps.map((gap) => ({ kind: 'gap', ...gap })),
  ].sort((a, b) => a.from - b.from);
}

describe('coverRange', () => {
  it('covers the last week with whole days, hours and recent minutes, and two short gaps', () => {
    const from = NOW - 7 * DAY;
    expect(pieces(from, undefined)).toEqual([
      { kind: 'gap', from, to: Date.parse('2026-11-22T11:00:00Z') },
      { kind: 'hour', from: Date.parse('2026-11-22T11:00:00Z'), to: Date.parse('2026-11-23T00:00:00Z') },
      { kind: 'day', from: Date.parse('2026-11-23T00:00:00Z'), to: Infinity },
    ]);
    const to = NOW;
    expect(pieces(from, to).slice(-4)).toEqual([
      { kind: 'day', from: Date.parse('2026-11-23T00:00:00Z'), to: Date.parse('2026-11-29T00:00:00Z') },
      { kind: 'hour', from: Date.parse('2026-11-29T00:00:00Z'), to: Date.parse('2026-11-29T10:00:00Z') },
      { kind: 'minute', from: Date.parse('2026-11-29T10:00:00Z'), to: Date.parse('2026-11-29T10:17:00Z') },
      { kind: 'gap', from: Date.parse('2026-11-29T10:17:00Z'), to },
    ]);
  });

  it('uses no minute row older than the worker keeps, less a margin', () => {
    const { runs } = coverRange(NOW - 3 * HOUR - 30_000, NOW - 2 * HOUR + 7 * MINUTE, NOW);
    expect(runs.filter((run) => run.span === 'minute')).toEqual([]);
  });

  it('counts nothing from an empty or reversed range', () => {
    expect(coverRange(NOW, NOW, NOW)).toEqual({ runs: [], gaps: [] });
    expect(coverRange(NOW, NOW - DAY, NOW)).toEqual({ runs: [], gaps: [] });
  });

  it('tiles any range exactly: no hole, no overlap, buckets aligned, gaps short', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const instant = () => {
      const at = NOW - Math.floor(random() * 40 * DAY) + 2 * DAY;
      // Often exactly on a boundary, or a millisecond off one.
      const aligned = [
        at,
        Math.floor(at / HOUR) * HOUR,
        Math.floor(at / DAY) * DAY,
        Math.floor(at / MINUTE) * MINUTE,
      ];
      return aligned[Math.floor(random() * aligned.length)] + [0, 0, -1, 1][Math.floor(random() * 4)];
    };
    for (let round = 0; round < 2000; round++) {
      const from = random() < 0.1 ? undefined : instant();
      const to = random() < 0.1 ? undefined : instant();
      const start = from ?? -Infinity;
      const end = to ?? Infinity;
      const covered = pieces(from, to);
      if (start >= end) {
        expect(covered).toEqual([]);
        continue;
      }
      expect(covered[0].from).toBe(start);
      expect(covered[covered.length - 1].to).toBe(end);
      covered.forEach((piece, index) => {
        expect(piece.from).toBeLessThan(piece.to);
        if (index > 0) expect(piece.from).toBe(covered[index - 1].to);
        if (piece.kind === 'gap') {
          expect(piece.to - piece.from).toBeLessThan(piece.from >= NOW - HOUR ? MINUTE : HOUR);
        } else {
          const length = LENGTH[piece.kind as keyof typeof LENGTH];
          for (const bound of [piece.from, piece.to])
            if (Number.isFinite(bound)) expect(bound % length).toBe(0);
          if (piece.kind === 'minute') expect(piece.from).toBeGreaterThanOrEqual(NOW - MINUTE_ROWS_KEPT_MS);
        }
      });
    }
  });
});
