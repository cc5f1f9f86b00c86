import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from '../database/sql';
import { MINUTE_ROWS_KEPT_MS, type StatsSpan } from './stats-windows';

/** An endpoint's event counts of one counter bucket (all shards summed). */
export interface EventCountsRow {
  bucketStart: number;
  received: number;
  delivered: number;
  failed: number;
  deadLetter: number;
}

/** A destination's attempts since a time, with their latency histogram (cell index → count). */
export interface DestinationAttemptsRow {
  id: string;
  url: string;
  attempts: number;
  successes: number;
  latency: Map<number, number>;
}

/**
 * The queries of the statistics: reads of the counters the database keeps as events and attempts are
 * written (the endpoint_stats migration's triggers), and their upkeep.
 */
@Injectable()
export class StatsRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return this.em.getKnex();
  }

  /** The endpoint's event counts per counter bucket of `span`, from `since` on. */
  async eventCounts(endpointId: string, span: StatsSpan, since: Date): Promise<EventCountsRow[]> {
    const { rows } = await this.knex.raw(
      `select (extract(epoch from bucket_start) * 1000)::bigint as bucket_start,
              sum(received)::int as received, sum(delivered)::int as delivered, sum(failed)::int as failed,
              sum(dead_letter)::int as dead_letter
       from endpoint_event_stats
       where endpoint_id = ? and span = ? and bucket_start >= ?
       group by bucket_start`,
      [endpointId, span, since.toISOString()],
    );
    return (rows as Record<string, string | number>[]).map((row) => ({
      bucketStart: Number(row.bucket_start),
      received: Number(row.received),
      delivered: Number(row.delivered),
      failed: Number(row.failed),
      deadLetter: Number(row.dead_letter),
    }));
  }

  /** Every destination of the endpoint (oldest first) with its attempts from `since` on. */
  async destinationAttempts(
    endpointId: string,
    span: StatsSpan,
    since: Date,
  ): Promise<DestinationAttemptsRow[]> {
    const bindings = [span, since.toISOString(), endpointId];
    const [totals, cells] = await Promise.all([
      this.knex.raw(
        `select d.id, d.url, coalesce(sum(s.attempts), 0)::int as attempts,
                coalesce(sum(s.successes), 0)::int as successes
         from destinations d
         left join destination_attempt_stats s on s.destination_id = d.id and s.span = ? and s.bucket_start >= ?
         where d.endpoint_id = ?
         group by d.id, d.url, d.created_at
         order by d.created_at, d.id`,
        bindings,
      ),
      this.knex.raw(
        `select s.destination_id, h.cell - 1 as cell, sum(h.count)::int as count
         from destination_attempt_stats s
         cross join lateral unnest(s.latency) with ordinality as h(count, cell)
         where s.span = ? and s.bucket_start >= ?
           and s.destination_id in (select id from destinations where endpoint_id = ?)
         group by 1, 2
         having sum(h.count) <> 0`,
        bindings,
      ),
    ]);
    const latency = new Map<string, Map<number, number>>();
    for (const row of cells.rows as { destination_id: string; cell: string; count: number }[]) {
      const histogram = latency.get(row.destination_id) ?? new Map<number, number>();
      histogram.set(Number(row.cell), row.count);
      latency.set(row.destination_id, histogram);
    }
    return (totals.rows as { id: string; url: string; attempts: number; successes: number }[]).map((row) => ({
      id: row.id,
      url: row.url,
      attempts: row.attempts,
      successes: row.successes,
      latency: latency.get(row.id) ?? new Map(),
    }));
  }

  /** Deletes the minute rows older than MINUTE_ROWS_KEPT_MS. */
  async deleteOldMinuteRows(): Promise<void> {
    for (const table of ['endpoint_event_stats', 'destination_attempt_stats']) {
      await this.knex.raw(
        `delete from ${table} where span = 'minute' and bucket_start < now() - make_interval(secs => ?)`,
        [MINUTE_ROWS_KEPT_MS / 1000],
      );
    }
  }

  /**
   * Folds the shards of the hour and day rows whose bucket is past (by two hours or two days) into shard
   * 0, so that reads sum fewer rows. One statement per table: the rows it deletes are the ones it adds
   * back, so a change written meanwhile is never lost nor counted twice. Rows a writer holds are skipped
   * (folded next time), and shard 0 is upserted in key order, as the triggers do: the fold never makes a
   * capture or an attempt wait on it, nor deadlock.
   */
  async foldPastShards(): Promise<void> {
    const past = `shard <> 0 and span <> 'minute' and bucket_start < now() - case span when 'hour' then interval '2 hours' else interval '2 days' end`;
    await this.knex.raw(
      `with doomed as (select ctid from endpoint_event_stats where ${past}
                      order by endpoint_id, span, bucket_start, shard for update skip locked),
            folded as (delete from endpoint_event_stats where ctid in (select ctid from doomed)
                       returning endpoint_id, span, bucket_start, received, delivered, failed, dead_letter)
       insert into endpoint_event_stats as s
         (endpoint_id, span, bucket_start, shard, received, delivered, failed, dead_letter)
       select endpoint_id, span, bucket_start, 0, sum(received), sum(delivered), sum(failed), sum(dead_letter)
       from folded group by 1, 2, 3 order by 1, 2, 3
       on conflict (endpoint_id, span, bucket_start, shard) do update set
         received = s.received + excluded.received, delivered = s.delivered + excluded.delivered,
         failed = s.failed + excluded.failed, dead_letter = s.dead_letter + excluded.dead_letter`,
    );
    await this.knex.raw(
      `with doomed as (select ctid from destination_attempt_stats where ${past}
                      order by destination_id, span, bucket_start, shard for update skip locked),
            folded as (delete from destination_attempt_stats where ctid in (select ctid from doomed)
                       returning destination_id, span, bucket_start, attempts, successes, latency)
       insert into destination_attempt_stats as s
         (destination_id, span, bucket_start, shard, attempts, successes, latency)
       select destination_id, span, bucket_start, 0, sum(attempts), sum(successes), stats_histogram_sum(latency)
       from folded group by 1, 2, 3 order by 1, 2, 3
       on conflict (destination_id, span, bucket_start, shard) do update set
         attempts = s.attempts + excluded.attempts, successes = s.successes + excluded.successes,
         latency = stats_histogram_add(s.latency, excluded.latency)`,
    );
  }
}
