import { FREE_ATTEMPT_SHARD } from '../database/attempt-stats-functions';
import { type PreparedStatement, runPrepared, type Sql } from '../database/sql';
import { LATENCY_CELLS, latencyCellOf } from './latency-histogram';

/** An attempt as a destination's statistics count it. */
export interface CountedAttempt {
  destinationId: string;
  at: Date;
  durationMs: number;
  responseCode: number | null;
}

/** The spans of `destination_attempt_stats` and their length (buckets start on multiples of it, in UTC). */
const SPANS = [
  ['minute', 60_000],
  ['hour', 3_600_000],
  ['day', 86_400_000],
] as const;

interface Bucket {
  destinationId: string;
  span: string;
  start: number;
  attempts: number;
  successes: number;
  latency: number[];
}

/**
 * Adds per-bucket totals to the rows of a shard that no other transaction holds (`stats_free_shard`, so two
 * batches do not queue on the same rows), in key order as every writer of the table takes them (two
 * batches never deadlock); `stats_histogram_add` sums the latency histograms cell by cell.
 */
const ADD: PreparedStatement = {
  name: 'hooktrail-add-attempt-stats',
  text: `
  insert into destination_attempt_stats as s
    (destination_id, span, bucket_start, shard, attempts, successes, latency)
  select destination_id, span, bucket_start, free.shard, attempts, successes, latency::integer[]
  from unnest(?::uuid[], ?::text[], ?::timestamptz[], ?::integer[], ?::integer[], ?::text[])
    as b(destination_id, span, bucket_start, attempts, successes, latency)
  cross join (select ${FREE_ATTEMPT_SHARD} as shard) free
  order by 1, 2, 3
  on conflict (destination_id, span, bucket_start, shard) do update set
    attempts = s.attempts + excluded.attempts, successes = s.successes + excluded.successes,
    latency = stats_histogram_add(s.latency, excluded.latency)`,
};

/**
 * Counts attempts in their destinations' statistics (README, "Statistics"): each in the minute, hour and
 * day (UTC) of its start, with its 2xx and its duration's latency cell. One statement for a batch.
 */
export async function addAttemptStats(sql: Sql, attempts: readonly CountedAttempt[]): Promise<void> {
  const buckets = new Map<string, Bucket>();
  for (const { destinationId, at, durationMs, responseCode } of attempts) {
    const cell = latencyCellOf(durationMs);
    const succeeded = responseCode !== null && responseCode >= 200 && responseCode <= 299;
    for (const [span, length] of SPANS) {
      const start = Math.floor(at.getTime() / length) * length;
      const key = `${destinationId} ${span} ${start}`;
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = {
          destinationId,
          span,
          start,
          attempts: 0,
          successes: 0,
          latency: Array(LATENCY_CELLS).fill(0),
        };
        buckets.set(key, bucket);
      }
      bucket.attempts += 1;
      if (succeeded) bucket.successes += 1;
      bucket.latency[cell] += 1;
    }
  }
  if (buckets.size === 0) return;
  const rows = [...buckets.values()];
  await runPrepared(sql, ADD, [
    rows.map((row) => row.destinationId),
    rows.map((row) => row.span),
    rows.map((row) => new Date(row.start).toISOString()),
    rows.map((row) => row.attempts),
    rows.map((row) => row.successes),
    rows.map((row) => `{${row.latency.join(',')}}`),
  ]);
}
