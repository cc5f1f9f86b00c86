import type { Knex } from '../database/sql';
import { DAY, HOUR, MINUTE, MINUTE_ROWS_KEPT_MS, type StatsSpan } from '../stats/stats-windows';
import type { EventStatus } from '../model/event.entity';

/**
 * Minute rows are read only this much younger than the oldest the worker keeps, so that a row is never read
 * as it is deleted, and a few minutes between this process's clock and PostgreSQL's do not matter.
 */
const MINUTE_ROWS_MARGIN_MS = 30 * MINUTE;

/** Whole counter buckets of one span, starting in [from, to) (a bound left out: unbounded that way). */
export interface BucketRun {
  span: StatsSpan;
  from?: number;
  to?: number;
}

/** Part of a range that no whole bucket covers: its events are counted from the index. */
interface Gap {
  from: number;
  to: number;
}

const SPANS: { span: StatsSpan; ms: number }[] = [
  { span: 'day', ms: DAY },
  { span: 'hour', ms: HOUR },
  { span: 'minute', ms: MINUTE },
];

/**
 * The time range [from, to) (epoch ms; undefined: unbounded) as whole UTC days, then whole hours at
 * either end, then whole minutes where minute rows are kept (since `now` − MINUTE_ROWS_KEPT_MS, with a
 * margin), and the gaps at either end that no whole bucket covers: less than an hour each, less than a
 * minute within the last hour and a half.
 */
export function coverRange(from: number | undefined, to: number | undefined, now: number) {
  const runs: BucketRun[] = [];
  const gaps: Gap[] = [];
  const minutesSince = now - MINUTE_ROWS_KEPT_MS + MINUTE_ROWS_MARGIN_MS;
  const cover = (start: number, end: number, level: number): void => {
    if (start >= end) return;
    if (level === SPANS.length) {
      gaps.push({ from: start, to: end });
      return;
    }
    const { span, ms } = SPANS[level];
    let first = Math.ceil(start / ms) * ms;
    if (span === 'minute') first = Math.max(first, Math.ceil(minutesSince / ms) * ms);
    const last = Math.floor(end / ms) * ms;
    if (first >= last) return cover(start, end, level + 1);
    cover(start, first, level + 1);
    runs.push({
      span,
      ...(Number.isFinite(first) ? { from: first } : {}),
      ...(Number.isFinite(last) ? { to: last } : {}),
    });
    cover(last, end, level + 1);
  };
  cover(from ?? -Infinity, to ?? Infinity, 0);
  return { runs, gaps };
}

/** The counter column of each status (named alike; the map keeps anything else out of the SQL). */
const STATUS_COLUMNS: Record<EventStatus, string> = {
  received: 'received',
  delivered: 'delivered',
  failed: 'failed',
  dead_letter: 'dead_letter',
};

/**
 * The exact number of an endpoint's events (of one status) received in [from, to), in one statement: the
 * statistics counters (endpoint_event_stats, which the events' triggers keep in the same transactions)
 * for the whole buckets of the range, and the index for what is left at its ends (coverRange). So a range
 * of a week costs a few dozen counter rows and two short index scans, not a scan of every event in it.
 */
export async function countEventsInRange(
  knex: Knex,
  endpointId: string,
  range: { from?: Date; to?: Date; status?: EventStatus },
): Promise<number> {
  const { runs, gaps } = coverRange(range.from?.getTime(), range.to?.getTime(), Date.now());
  const iso = (ms: number) => new Date(ms).toISOString();
  const terms: string[] = [];
  const bindings: unknown[] = [];
  if (runs.length > 0) {
    const runBindings: unknown[] = [];
    const runSql = runs.map(({ span, from, to }) => {
      runBindings.push(span);
      let sql = 'span = ?';
      if (from !== undefined) {
        sql += ' and bucket_start >= ?';
        runBindings.push(iso(from));
      }
      if (to !== undefined) {
        sql += ' and bucket_start < ?';
        runBindings.push(iso(to));
      }
      return `(${sql})`;
    });
    const column =
      range.status === undefined
        ? 'received + delivered + failed + dead_letter'
        : STATUS_COLUMNS[range.status];
    terms.push(
      `coalesce((select sum(${column}) from endpoint_event_stats where endpoint_id = ? and (${runSql.join(' or ')})), 0)`,
    );
    bindings.push(endpointId, ...runBindings);
  }
  for (const gap of gaps) {
    terms.push(
      `(select count(*) from events where endpoint_id = ?${range.status === undefined ? '' : ' and status = ?'}
         and received_at >= ? and received_at < ?)`,
    );
    bindings.push(
      endpointId,
      ...(range.status === undefined ? [] : [range.status]),
      iso(gap.from),
      iso(gap.to),
    );
  }
  if (terms.length === 0) return 0;
  const { rows } = await knex.raw(`select (${terms.join(' + ')})::bigint as total`, bindings as never[]);
  return Number((rows as { total: string }[])[0].total);
}
