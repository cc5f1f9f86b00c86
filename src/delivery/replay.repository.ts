import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';

/** The single replay's query: a new dispatch of one event. */
@Injectable()
export class ReplayRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * A new dispatch of the endpoint's event to its currently active destinations (the caller's access is
   * checked before). Returns null when the endpoint has no such event, [] when there is no active destination.
   */
  async createReplay(endpointId: string, eventId: string, dispatchId: string): Promise<string[] | null> {
    return this.em.getKnex().transaction(async (trx) => {
      const found = await trx.raw(`select 1 from events where id = ? and endpoint_id = ?`, [
        eventId,
        endpointId,
      ]);
      if (found.rows.length === 0) return null;
      const inserted = await trx.raw(
        `insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, next_attempt_at)
         select gen_random_uuid(), ?, d.id, d.url, ?, 'pending', now()
         from destinations d where d.endpoint_id = ? and d.is_active
         returning id`,
        [eventId, dispatchId, endpointId],
      );
      return inserted.rows.map((row: { id: string }) => row.id);
    });
  }
}
