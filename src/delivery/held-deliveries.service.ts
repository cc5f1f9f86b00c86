import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import type { DeliveryOrdering } from '../model/destination.entity';
import { DeliveryQueue } from './delivery-queue.service';
import { FifoPumps } from './fifo-pumps.service';

/** Deliveries enqueued per round trip when a destination is resumed. */
const RELEASE_CHUNK = 1000;

/** Timestamps come as PostgreSQL's text (microseconds kept for the keyset). */
interface WaitingRow {
  id: string;
  attempt_count: number;
  next_attempt_at: string | null;
  created_at: string;
}

/**
 * The backlog a paused destination holds. While it is paused, a worker that picks one of its deliveries
 * lets the job go without an attempt (the delivery stays `pending`, or `failed` awaiting its retry, with
 * its attempts untouched) and the sweeper leaves it alone. On resume, `release` enqueues them all, in the
 * order they were dispatched, each at its own due time; the flow-control limits pace them from there (a
 * FIFO destination's pump takes them in order). The same release sends the backlog of a destination whose
 * `ordering` went from `fifo` to `none`. If
 * the release is cut short, the sweeper finds the rest overdue and enqueues them.
 */
@Injectable()
export class HeldDeliveries {
  private readonly logger = new Logger(HeldDeliveries.name);

  constructor(
    private readonly em: EntityManager,
    private readonly queue: DeliveryQueue,
    private readonly pumps: FifoPumps,
  ) {}

  /**
   * Enqueues the destination's waiting deliveries in chunks and resolves with how many were enqueued; a
   * FIFO destination's pump is woken instead (it sends them one at a time). A delivery still waiting in a
   * dispatch job is left to it: a job of its own beside it would send it twice (a pause undone before the
   * dispatch ran). Should that dispatch end without it meanwhile, the sweeper enqueues it.
   */
  async release(destinationId: string, ordering: DeliveryOrdering): Promise<number> {
    if (ordering === 'fifo') {
      await this.pumps.wake(destinationId);
      return 0;
    }
    let released = 0;
    for await (const waiting of this.waitingChunks(destinationId)) {
      const dispatches = await this.queue.dispatchesOf(waiting.map((row) => row.id));
      const rows = waiting.filter((_row, index) => dispatches[index] === undefined);
      const now = Date.now();
      await this.queue.enqueue(
        rows.map((row) => ({
          id: row.id,
          priorAttempts: row.attempt_count,
          delayMs:
            row.attempt_count > 0 && row.next_attempt_at
              ? Math.max(0, Date.parse(row.next_attempt_at) - now)
              : 0,
        })),
      );
      released += rows.length;
    }
    this.logger.log({ destinationId, released }, 'resumed destination: held deliveries enqueued');
    return released;
  }

  /**
   * The destination's rate limit changed: its deliveries whose jobs wait for a rate slot reserved under the
   * old limit run again now, and take their place under the new one (a raised limit does not wait out the
   * old schedule). Retries not due yet keep their time. Resolves with how many jobs were brought forward.
   * A FIFO destination's pump takes its next slot under the new limit by itself. A delivery never
   * attempted is always due, whatever its `next_attempt_at` says (the sweeper moves that on, 30 s at a
   * time, while the delivery's job waits for its slot).
   */
  async repace(destinationId: string): Promise<number> {
    let promoted = 0;
    for await (const rows of this.waitingChunks(destinationId)) {
      const now = Date.now();
      const due = rows.filter(
        (row) =>
          row.attempt_count === 0 || row.next_attempt_at === null || Date.parse(row.next_attempt_at) <= now,
      );
      promoted += await this.queue.promote(due.map((row) => row.id));
    }
    this.logger.log({ destinationId, promoted }, 'rate limit changed: deferred deliveries brought forward');
    return promoted;
  }

  /** The destination's pending and failed deliveries, in the order they were dispatched, a chunk at a time. */
  private async *waitingChunks(destinationId: string): AsyncGenerator<WaitingRow[]> {
    let after: WaitingRow | undefined;
    for (;;) {
      const rows = await this.waiting(destinationId, after);
      if (rows.length > 0) yield rows;
      if (rows.length < RELEASE_CHUNK) return;
      after = rows.at(-1);
    }
  }

  private async waiting(destinationId: string, after: WaitingRow | undefined): Promise<WaitingRow[]> {
    const { rows } = await this.em.getKnex().raw<{ rows: WaitingRow[] }>(
      `select id, attempt_count, next_attempt_at, created_at from deliveries
       where destination_id = ? and status in ('pending', 'failed')
         and (created_at, id) > (?::timestamptz, ?::uuid)
       order by created_at, id limit ?`,
      [
        destinationId,
        after?.created_at ?? new Date(0).toISOString(),
        after?.id ?? '00000000-0000-0000-0000-000000000000',
        RELEASE_CHUNK,
      ],
    );
    return rows;
  }
}
