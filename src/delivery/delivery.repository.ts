import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { EventStatus } from '../events/event.entity';
import type { AttemptOutcome } from './delivery-sender';
import type { DeliveryAttempt, DeliveryStatus } from './delivery.entity';

/** Everything one attempt needs, read in one query. */
export interface DeliveryContext {
  id: string;
  eventId: string;
  endpointId: string;
  status: DeliveryStatus;
  attemptCount: number;
  /** The destination as it is now (a URL fixed during retries is used by the next attempt); null once removed. */
  destination: { url: string; secret: string | null; isActive: boolean } | null;
  method: string;
  headers: Record<string, string | string[]>;
  query: string;
  body: Buffer;
}

export interface RecordedAttempt {
  deliveryStatus: DeliveryStatus;
  attemptCount: number;
  eventStatus: EventStatus;
  /** The event moved to `dead_letter` with this attempt: an alert was written to the outbox. */
  deadLettered: boolean;
  endpointId: string;
}

export interface DueDelivery {
  id: string;
  attemptCount: number;
}

/**
 * The event's status from its deliveries (spec §3): delivered once any delivery succeeded; otherwise
 * failed while any is still in progress after an attempt was made, received before any attempt;
 * dead_letter once every delivery is exhausted.
 */
const EVENT_STATUS_SQL = `
  with agg as (
    select bool_or(status = 'delivered') as delivered,
           bool_or(status in ('pending', 'failed')) as in_progress,
           bool_or(attempt_count > 0) as attempted,
           bool_or(status = 'dead_letter') as dead
    from deliveries where event_id = ?
  )
  update events set status = case
      when agg.delivered then 'delivered'
      when agg.in_progress and agg.attempted then 'failed'
      when agg.in_progress then 'received'
      when agg.dead then 'dead_letter'
      else 'received' end
  from agg where events.id = ?
  returning events.status`;

/** Every query of the delivery aggregate. Writes that change an event's status lock the event row first. */
@Injectable()
export class DeliveryRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex() {
    return this.em.getKnex();
  }

  async loadForAttempt(deliveryId: string): Promise<DeliveryContext | null> {
    const { rows } = await this.knex.raw(
      `select d.id, d.event_id, d.status, d.attempt_count, e.endpoint_id, e.method, e.headers, e.query,
              e.body_text, e.body_bytes, dest.url as destination_url, dest.secret, dest.is_active
       from deliveries d
       join events e on e.id = d.event_id
       left join destinations dest on dest.id = d.destination_id
       where d.id = ?`,
      [deliveryId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      id: row.id,
      eventId: row.event_id,
      endpointId: row.endpoint_id,
      status: row.status,
      attemptCount: row.attempt_count,
      destination: row.destination_url
        ? { url: row.destination_url, secret: row.secret, isActive: row.is_active }
        : null,
      method: row.method,
      headers: row.headers,
      query: row.query,
      body: row.body_bytes ?? Buffer.from(row.body_text ?? '', 'utf8'),
    };
  }

  /**
   * Records one attempt and moves the delivery and its event on, in one transaction: the event row is
   * locked first, so two workers finishing deliveries of one event at once cannot lose an update.
   * Returns null when the delivery was already finished (a duplicate run of its job).
   */
  async recordAttempt(
    delivery: Pick<DeliveryContext, 'id' | 'eventId'>,
    attempt: AttemptOutcome & { at: Date },
    options: { maxAttempts: number; nextAttemptAt: Date | null },
  ): Promise<RecordedAttempt | null> {
    const succeeded =
      attempt.responseCode !== null && attempt.responseCode >= 200 && attempt.responseCode < 300;
    const entry: DeliveryAttempt = {
      at: attempt.at.toISOString(),
      response_code: attempt.responseCode,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      response_body: attempt.responseBody,
    };
    return this.knex.transaction(async (trx) => {
      const locked = await trx.raw(`select status, endpoint_id from events where id = ? for update`, [
        delivery.eventId,
      ]);
      const before = locked.rows[0] as { status: EventStatus; endpoint_id: string } | undefined;
      if (!before) return null;
      const updated = await trx.raw(
        `update deliveries set
           attempt_count = attempt_count + 1,
           status = case when ? then 'delivered' when attempt_count + 1 >= ? then 'dead_letter' else 'failed' end,
           response_code = ?, response_body = ?, last_attempted_at = ?,
           next_attempt_at = case when ? or attempt_count + 1 >= ? then null else ?::timestamptz end,
           attempts = attempts || ?::jsonb
         where id = ? and status in ('pending', 'failed')
         returning status, attempt_count`,
        [
          succeeded,
          options.maxAttempts,
          attempt.responseCode,
          attempt.responseBody,
          attempt.at,
          succeeded,
          options.maxAttempts,
          options.nextAttemptAt,
          JSON.stringify([entry]),
          delivery.id,
        ],
      );
      const row = updated.rows[0] as { status: DeliveryStatus; attempt_count: number } | undefined;
      if (!row) return null;
      const eventStatus = await this.refreshEventStatus(trx, delivery.eventId);
      const deadLettered = eventStatus === 'dead_letter' && before.status !== 'dead_letter';
      if (deadLettered) {
        await trx.raw(`insert into dead_letter_alerts (endpoint_id, event_id) values (?, ?)`, [
          before.endpoint_id,
          delivery.eventId,
        ]);
      }
      return {
        deliveryStatus: row.status,
        attemptCount: row.attempt_count,
        eventStatus,
        deadLettered,
        endpointId: before.endpoint_id,
      };
    });
  }

  /** Closes a delivery without sending: its destination was removed or deactivated during its retries. */
  async abandon(
    delivery: Pick<DeliveryContext, 'id' | 'eventId'>,
    reason: string,
  ): Promise<RecordedAttempt | null> {
    return this.recordAttempt(
      delivery,
      { at: new Date(), responseCode: null, responseBody: null, durationMs: 0, error: reason },
      { maxAttempts: 0, nextAttemptAt: null },
    );
  }

  private async refreshEventStatus(
    trx: ReturnType<EntityManager['getKnex']>,
    eventId: string,
  ): Promise<EventStatus> {
    const result = await trx.raw(EVENT_STATUS_SQL, [eventId, eventId]);
    return result.rows[0].status;
  }

  /** Deliveries still owed an attempt whose due time passed `graceSeconds` ago: their job may be lost. */
  async findOverdue(graceSeconds: number, limit: number): Promise<DueDelivery[]> {
    const { rows } = await this.knex.raw(
      `select id, attempt_count from deliveries
       where status in ('pending', 'failed') and next_attempt_at < now() - make_interval(secs => ?)
       order by next_attempt_at limit ?`,
      [graceSeconds, limit],
    );
    return rows.map((row: { id: string; attempt_count: number }) => ({
      id: row.id,
      attemptCount: row.attempt_count,
    }));
  }

  /** Moves the sweeper's next look at these deliveries `seconds` ahead. */
  async postpone(ids: string[], seconds: number): Promise<void> {
    if (ids.length === 0) return;
    await this.knex.raw(
      `update deliveries set next_attempt_at = now() + make_interval(secs => ?)
       where id = any(?::uuid[]) and status in ('pending', 'failed')`,
      [seconds, ids],
    );
  }

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
    return this.knex.transaction(async (trx) => {
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
