import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable, Logger } from '@nestjs/common';
import { DeliveryQueue } from './delivery-queue.service';

/** Deliveries enqueued per round trip when a destination is resumed. */
const RELEASE_CHUNK = 1000;

interface WaitingRow {
  id: string;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
}

/**
 * The backlog a paused destination holds. While it is paused, a worker that picks one of its deliveries
 * lets the job go without an attempt (the delivery stays `pending`, or `failed` awaiting its retry, with
 * its attempts untouched) and the sweeper leaves it alone. On resume, `release` enqueues them all, in the
 * order they were dispatched, each at its own due time; the flow-control limits pace them from there. If
 * the release is cut short, the sweeper finds the rest overdue and enqueues them.
 */
@Injectable()
export class HeldDeliveries {
  private readonly logger = new Logger(HeldDeliveries.name);

  constructor(
    private readonly em: EntityManager,
    private readonly queue: DeliveryQueue,
  ) {}

  /** Enqueues the destination's waiting deliveries in chunks; resolves with how many were enqueued. */
  async release(destinationId: string): Promise<number> {
    let released = 0;
    let after: WaitingRow | undefined;
    for (;;) {
      const rows = await this.waiting(destinationId, after);
      const now = Date.now();
      await this.queue.enqueue(
        rows.map((row) => ({
          id: row.id,
          priorAttempts: row.attempt_count,
          delayMs: row.attempt_count > 0 ? Math.max(0, (row.next_attempt_at?.getTime() ?? now) - now) : 0,
        })),
      );
      released += rows.length;
      if (rows.length < RELEASE_CHUNK) break;
      after = rows.at(-1);
    }
    this.logger.log({ destinationId, released }, 'resumed destination: held deliveries enqueued');
    return released;
  }

  private async waiting(destinationId: string, after: WaitingRow | undefined): Promise<WaitingRow[]> {
    const { rows } = await this.em.getKnex().raw<{ rows: WaitingRow[] }>(
      `select id, attempt_count, next_attempt_at, created_at from deliveries
       where destination_id = ? and status in ('pending', 'failed')
         and (created_at, id) > (?::timestamptz, ?::uuid)
       order by created_at, id limit ?`,
      [
        destinationId,
        after?.created_at ?? new Date(0),
        after?.id ?? '00000000-0000-0000-0000-000000000000',
        RELEASE_CHUNK,
      ],
    );
    return rows;
  }
}
