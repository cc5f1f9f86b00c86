import { oldestFirst } from './event-history';

describe(oldestFirst.name, () => {
  const event = (id: string, received_at: string) => ({ id, received_at });

  it('orders by receive time, then by id, as the API does in reverse', () => {
    const events = [
      event('b', '2026-11-23T10:00:01.000Z'),
      event('c', '2026-11-23T10:00:00.500Z'),
      event('a', '2026-11-23T10:00:01.000Z'),
    ];
    expect(events.sort(oldestFirst).map(({ id }) => id)).toEqual(['c', 'a', 'b']);
  });
});
