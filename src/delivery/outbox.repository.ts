import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from '../database/sql';
import { sqlOf } from '../database/write-transaction';

export interface DueDelivery {
  id: string;
  attemptCount: number;
}

/**
 * The next delivery of a FIFO destination (its id given as SQL): the oldest still owed an attempt, in the
 * order deliveries were made (with its capture, or when a replay was asked for: a replay joins the end),
 * then in the events' capture order (`received_at`, then id). The partial index on waiting deliveries
 * (destination_id, created_at) serves it.
 */
const fifoHeadSql = (destinationId: string) => `
  select h.id, h.attempt_count, h.next_attempt_at from deliveries h join events he on he.id = h.event_id
  where h.destination_id = ${destinationId} and h.status in ('pending', 'failed')
  order by h.created_at, he.received_at, he.id, h.id limit 1`;

/**
 * The deliveries table as the outbox of the queue: what the sweeper finds overdue and postpones, and a
 * FIFO destination's next delivery.
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return sqlOf(this.em);
  }

  /**
   * Deliveries still owed an attempt whose due time passed `graceSeconds` ago: their job may be lost.
   * Those a paused destination holds are not overdue; of a FIFO destination's, only the next one can be
   * (the others wait for it, not for a job). A destination switched off holds nothing, paused or FIFO:
   * each of its deliveries is overdue, and its job closes it without a request.
   */
  async findOverdue(graceSeconds: number, limit: number): Promise<DueDelivery[]> {
    const { rows } = await this.knex.raw(
      `(select d.id, d.attempt_count, d.next_attempt_at from deliveries d
        where d.status in ('pending', 'failed') and d.next_attempt_at < now() - make_interval(secs => ?)
          and not exists (select 1 from destinations p
                          where p.id = d.destination_id and p.is_active and (p.paused or p.ordering = 'fifo'))
        order by d.next_attempt_at limit ?)
       union all
       (select head.id, head.attempt_count, head.next_attempt_at from destinations p
        cross join lateral (${fifoHeadSql('p.id')}) head
        where p.ordering = 'fifo' and p.is_active and not p.paused
          and head.next_attempt_at < now() - make_interval(secs => ?))
       order by next_attempt_at limit ?`,
      [graceSeconds, limit, graceSeconds, limit],
    );
    return rows.map((row: { id: string; attempt_count: number }) => ({
      id: row.id,
      attemptCount: row.attempt_count,
    }));
  }

  /**
   * Those of `deliveries` still owed an attempt and not attempted since they were read (the same attempt
   * count): the others were finished, or moved on, meanwhile.
   */
  async stillOwed(deliveries: DueDelivery[]): Promise<DueDelivery[]> {
    if (deliveries.length === 0) return [];
    const { rows } = await this.knex.raw(
      `select d.id, d.attempt_count from deliveries d
       join unnest(?::uuid[], ?::int[]) as read(id, attempt_count) on read.id = d.id
       where d.status in ('pending', 'failed') and d.attempt_count = read.attempt_count`,
      [deliveries.map((delivery) => delivery.id), deliveries.map((delivery) => delivery.attemptCount)],
    );
    const key = (id: string, attemptCount: number) => `${id}/${attemptCount}`;
    const owed = new Set(
      (rows as { id: string; attempt_count: number }[]).map((row) => key(row.id, row.attempt_count)),
    );
    return deliveries.filter((delivery) => owed.has(key(delivery.id, delivery.attemptCount)));
  }

  /** The next delivery of a FIFO destination, or null when none waits. */
  async fifoHead(destinationId: string): Promise<DueDelivery | null> {
    const { rows } = await this.knex.raw(fifoHeadSql('?'), [destinationId]);
    const head = rows[0] as { id: string; attempt_count: number } | undefined;
    return head ? { id: head.id, attemptCount: head.attempt_count } : null;
  }

  /**
   * Moves the sweeper's next look at these deliveries `seconds` ahead. Rows an attempt is being recorded
   * on right now are skipped (they need no look), so this never waits on, or deadlocks with, a worker.
   */
  async postpone(ids: string[], seconds: number): Promise<void> {
    if (ids.length === 0) return;
    await this.knex.raw(
      `update deliveries set next_attempt_at = now() + make_interval(secs => ?)
       where id in (select id from deliveries where id = any(?::uuid[]) and status in ('pending', 'failed')
                    order by id for update skip locked)`,
      [seconds, ids],
    );
  }
}
