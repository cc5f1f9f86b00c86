import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from '@mikro-orm/postgresql';
import type { FilterRule } from '../ingest/filter';
import { ENFORCES_VERIFICATION, EventRouting, type RoutedEvent } from '../ingest/routing';
import { sqlOf } from '../database/write-transaction';

/** A replay as made: the deliveries created, and each active destination left out with why. */
export interface CreatedReplay {
  deliveryIds: string[];
  skipped: { url: string; reason: string }[];
}

/**
 * Pending deliveries of new dispatches: one per (event, destination, dispatch), from `unnest` of three
 * arrays; answers their ids. Each event is read `for key share`: retention does not delete it until the
 * deliveries are committed (they then keep it), and one that a retention batch is deleting is waited for,
 * then passed over (its pairs insert nothing) instead of failing the whole insert on the foreign key.
 */
export async function insertDispatches(
  trx: Knex,
  pairs: { eventId: string; destinationId: string; dispatchId: string }[],
): Promise<string[]> {
  if (pairs.length === 0) return [];
  const { rows } = await trx.raw(
    `insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status, next_attempt_at)
     select gen_random_uuid(), p.event_id, d.id, d.url, p.dispatch_id, 'pending', now()
     from unnest(?::uuid[], ?::uuid[], ?::uuid[]) as p(event_id, destination_id, dispatch_id)
     join destinations d on d.id = p.destination_id
     join events e on e.id = p.event_id
     for key share of e
     returning id`,
    [
      pairs.map((pair) => pair.eventId),
      pairs.map((pair) => pair.destinationId),
      pairs.map((pair) => pair.dispatchId),
    ] as never[],
  );
  return rows.map((row: { id: string }) => row.id);
}

/** The single replay's query: a new dispatch of one event. */
@Injectable()
export class ReplayRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * A new dispatch of the endpoint's event to the active destinations that would receive it were it
   * captured now (their filters, the endpoint's enforced verification: EventRouting); the caller's access
   * is checked before. Returns null when the endpoint has no such event. The event is read `for key share`:
   * retention does not delete it until the replay's deliveries are committed (they then keep it), and one
   * retention is deleting is waited for, then found gone.
   */
  async createReplay(endpointId: string, eventId: string, dispatchId: string): Promise<CreatedReplay | null> {
    return sqlOf(this.em).transaction(async (trx) => {
      const found = await trx.raw(
        `select e.method, e.headers, e.query, e.body_text, e.body_bytes, e.verification_status,
                e.verification_reason, ${ENFORCES_VERIFICATION} as enforced
         from events e join endpoints ep on ep.id = e.endpoint_id
         where e.id = ? and e.endpoint_id = ?
         for key share of e`,
        [eventId, endpointId],
      );
      const event = found.rows[0] as (RoutedEvent & { enforced: boolean }) | undefined;
      if (!event) return null;
      const { rows: destinations } = await trx.raw(
        `select id, url, is_active, filter from destinations where endpoint_id = ? and is_active
         order by created_at, id`,
        [endpointId],
      );
      const routing = new EventRouting(event, event.enforced);
      const verdicts = (
        destinations as { id: string; url: string; is_active: boolean; filter: FilterRule | null }[]
      ).map((destination) => ({ ...destination, reason: routing.reasonNotReceived(destination) }));
      const receiving = verdicts.filter((verdict) => verdict.reason === null);
      return {
        deliveryIds: await insertDispatches(
          trx,
          receiving.map((destination) => ({ eventId, destinationId: destination.id, dispatchId })),
        ),
        skipped: verdicts.flatMap(({ url, reason }) => (reason === null ? [] : [{ url, reason }])),
      };
    });
  }
}
