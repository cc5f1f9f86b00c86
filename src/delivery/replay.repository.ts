import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';

/** The single replay's query: a new dispatch of one event. */
@Injectable()
export class ReplayRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * A new dispatch of an owned event to its endpoint's currently active destinations.
   * Returns null when the event is not the caller's, [] when there is no active destination.
   */
  async createReplay(
    userId: string,
    endpointId: string,
    eventId: string,
    dispatchId: string,
  ): Promise<string[] | null> {
    return this.em.getKnex().transaction(async (trx) => {
      const owned = await trx.raw(
        `select 1 from events e join endpoints ep on ep.id = e.endpoint_id
         where e.id = ? and e.endpoint_id = ? and ep.user_id = ?`,
        [eventId, endpointId, userId],
      );
      if (owned.rows.length === 0) return null;
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
