import { parseSince } from './since';

describe(parseSince.name, () => {
  const now = new Date('2026-11-23T12:00:00.000Z');

  it.each([
    ['90s', '2026-11-23T11:58:30.000Z'],
    ['10m', '2026-11-23T11:50:00.000Z'],
    ['2h', '2026-11-23T10:00:00.000Z'],
    ['1d', '2026-11-22T12:00:00.000Z'],
  ])('reads the duration %s back from now', (value, expected) => {
    expect(parseSince(value, now)?.toISOString()).toBe(expected);
  });

  it('reads an ISO 8601 time with an offset as that instant', () => {
    expect(parseSince('2026-11-23T10:00:00+02:00', now)?.toISOString()).toBe('2026-11-23T08:00:00.000Z');
    expect(parseSince('2026-11-23T10:00:00.250Z', now)?.toISOString()).toBe('2026-11-23T10:00:00.250Z');
  });

  it('reads a date or a date-time without an offset as local time', () => {
    expect(parseSince('2026-11-23', now)).toEqual(new Date(2026, 10, 23));
    expect(parseSince('2026-11-23T09:30', now)).toEqual(new Date(2026, 10, 23, 9, 30));
  });

  it.each(['', '10', 'm', '5x', '10 minutes', '-1h', '2026-02-30', '2026-13-01', 'yesterday'])(
    'refuses %j',
    (value) => {
      expect(parseSince(value, now)).toBeUndefined();
    },
  );
});
