import { addAttemptStats } from './attempt-stats';
import { LATENCY_CELLS, latencyCellOf } from './latency-histogram';

/** The rows addAttemptStats sends, read back from its bindings (one array per column). */
async function rowsSent(attempts: Parameters<typeof addAttemptStats>[1]) {
  const options = jest.fn().mockResolvedValue({ rows: [] });
  const raw = jest.fn().mockReturnValue({ options });
  await addAttemptStats({ raw } as never, attempts);
  if (raw.mock.calls.length === 0) return [];
  const [ids, spans, starts, counts, successes, latencies] = raw.mock.calls[0][1] as unknown[][];
  return ids.map((id, index) => ({
    id,
    span: spans[index],
    start: starts[index],
    attempts: counts[index],
    successes: successes[index],
    latency: (latencies[index] as string).slice(1, -1).split(',').map(Number),
  }));
}

/** A histogram with these cells counted. */
function histogram(...cells: number[]): number[] {
  const counts = Array<number>(LATENCY_CELLS).fill(0);
  for (const cell of cells) counts[cell] += 1;
  return counts;
}

describe('addAttemptStats', () => {
  it("adds each attempt to its destination's UTC minute, hour and day, with its 2xx and latency cell", async () => {
    const rows = await rowsSent([
      { destinationId: 'a', at: new Date('2026-11-27T23:59:10.500Z'), durationMs: 12, responseCode: 200 },
      { destinationId: 'a', at: new Date('2026-11-27T23:59:59.999Z'), durationMs: 900, responseCode: 503 },
      { destinationId: 'a', at: new Date('2026-11-28T00:00:00.000Z'), durationMs: 0, responseCode: null },
      { destinationId: 'b', at: new Date('2026-11-27T23:10:00.000Z'), durationMs: 12, responseCode: 299 },
    ]);
    const [fast, slow, none] = [latencyCellOf(12), latencyCellOf(900), latencyCellOf(0)];
    const row = (
      id: string,
      span: string,
      start: string,
      attempts: number,
      successes: number,
      latency: number[],
    ) => ({
      id,
      span,
      start,
      attempts,
      successes,
      latency,
    });
    expect(rows).toEqual([
      row('a', 'minute', '2026-11-27T23:59:00.000Z', 2, 1, histogram(fast, slow)),
      row('a', 'hour', '2026-11-27T23:00:00.000Z', 2, 1, histogram(fast, slow)),
      row('a', 'day', '2026-11-27T00:00:00.000Z', 2, 1, histogram(fast, slow)),
      row('a', 'minute', '2026-11-28T00:00:00.000Z', 1, 0, histogram(none)),
      row('a', 'hour', '2026-11-28T00:00:00.000Z', 1, 0, histogram(none)),
      row('a', 'day', '2026-11-28T00:00:00.000Z', 1, 0, histogram(none)),
      row('b', 'minute', '2026-11-27T23:10:00.000Z', 1, 1, histogram(fast)),
      row('b', 'hour', '2026-11-27T23:00:00.000Z', 1, 1, histogram(fast)),
      row('b', 'day', '2026-11-27T00:00:00.000Z', 1, 1, histogram(fast)),
    ]);
  });

  it('sends nothing for no attempts', async () => {
    expect(await rowsSent([])).toEqual([]);
  });
});
