import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { sqlOf } from '../database/write-transaction';

/** The deliveries waiting for one destination. */
export interface DestinationBacklog {
  /** Deliveries not yet delivered nor dead-lettered: never attempted, or failed and owed a retry. */
  pending: number;
  /** When the oldest of them was dispatched (its event captured, or replayed); null when none waits. */
  oldestPendingAt: Date | null;
}

/**
 * How many deliveries each destination owes, read from the outbox (the deliveries table) with one grouped
 * query over the partial index of waiting deliveries: its cost follows the backlog, not the history.
 */
@Injectable()
export class DestinationBacklogs {
  constructor(private readonly em: EntityManager) {}

  /** The backlog of each of `destinationIds` (zero for those with none). */
  async of(destinationIds: readonly string[]): Promise<Map<string, DestinationBacklog>> {
    const backlogs = new Map<string, DestinationBacklog>(
      destinationIds.map((id) => [id, { pending: 0, oldestPendingAt: null }]),
    );
    if (destinationIds.length === 0) return backlogs;
    const { rows } = await sqlOf(this.em).raw<{
      rows: { destination_id: string; pending: number; oldest_pending_at: string }[];
    }>(
      `select destination_id, count(*)::int as pending, min(created_at) as oldest_pending_at
       from deliveries
       where destination_id = any(?::uuid[]) and status in ('pending', 'failed')
       group by destination_id`,
      [[...destinationIds]],
    );
    for (const row of rows)
      backlogs.set(row.destination_id, {
        pending: row.pending,
        oldestPendingAt: new Date(row.oldest_pending_at),
      });
    return backlogs;
  }
}
