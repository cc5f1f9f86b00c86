import { bucketStarts, WINDOW_SHAPES } from './stats-windows';

describe('stats windows', () => {
  const now = Date.parse('2026-11-25T13:47:12.345Z');

  it('ends each window with the bucket now is in, oldest first, aligned on UTC', () => {
    const hour = bucketStarts(WINDOW_SHAPES['1h'], now);
    expect(hour).toHaveLength(60);
    expect(new Date(hour[59]).toISOString()).toBe('2026-11-25T13:47:00.000Z');
    expect(new Date(hour[0]).toISOString()).toBe('2026-11-25T12:48:00.000Z');
    const week = bucketStarts(WINDOW_SHAPES['7d'], now);
    expect(week).toHaveLength(28);
    expect(new Date(week[27]).toISOString()).toBe('2026-11-25T12:00:00.000Z');
    expect(new Date(week[0]).toISOString()).toBe('2026-11-18T18:00:00.000Z');
    const month = bucketStarts(WINDOW_SHAPES['30d'], now);
    expect(new Date(month[29]).toISOString()).toBe('2026-11-25T00:00:00.000Z');
    expect(new Date(month[0]).toISOString()).toBe('2026-10-27T00:00:00.000Z');
    expect(bucketStarts(WINDOW_SHAPES['24h'], now)).toHaveLength(24);
  });
});
