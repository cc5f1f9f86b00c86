import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { GroupCommit } from '../common/group-commit';
import { EVENT_COUNTS_FOLD_AT, foldEventCounts } from '../events/event-counts';
import type { EventStatus } from '../events/event.entity';
import type { FlowControl } from '../destinations/destination.entity';
import type { AttemptOutcome } from './delivery-sender';
import type { DeliveryAttempt, DeliveryStatus } from './delivery.entity';

/** A delivery's destination as it is now, with its flow control. */
export type DestinationContext = {
  id: string;
  url: string;
  secret: string | null;
  isActive: boolean;
} & FlowControl;

/** Everything one attempt needs, read in one query. */
export interface DeliveryContext {
  id: string;
  eventId: string;
  endpointId: string;
  status: DeliveryStatus;
  attemptCount: number;
  lastAttemptedAt: Date | null;
  /** The destination as it is now (a URL fixed during retries is used by the next attempt); null once removed. */
  destination: DestinationContext | null;
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
 * The events' statuses from their deliveries (spec §3): delivered once any delivery succeeded; otherwise
 * failed while any is still in progress after an attempt was made, received before any attempt;
 * dead_letter once every delivery is exhausted.
 */
const EVENT_STATUS_SQL = `
  with agg as (
    select event_id,
           bool_or(status = 'delivered') as delivered,
           bool_or(status in ('pending', 'failed')) as in_progress,
           bool_or(attempt_count > 0) as attempted,
           bool_or(status = 'dead_letter') as dead
    from deliveries where event_id = any(?::uuid[]) group by event_id
  )
  update events set status = case
      when agg.delivered then 'delivered'
      when agg.in_progress and agg.attempted then 'failed'
      when agg.in_progress then 'received'
      when agg.dead then 'dead_letter'
      else 'received' end
  from agg where events.id = agg.event_id
  returning events.id, events.status`;

/** Moves each delivery of the batch on by one attempt, unless it was already finished (a duplicate job run). */
const RECORD_ATTEMPTS_SQL = `
  update deliveries d set
    attempt_count = d.attempt_count + 1,
    status = case when i.succeeded then 'delivered' when d.attempt_count + 1 >= i.max_attempts then 'dead_letter'
                  else 'failed' end,
    response_code = i.response_code, response_body = i.response_body, last_attempted_at = i.at,
    next_attempt_at = case when i.succeeded or d.attempt_count + 1 >= i.max_attempts then null else i.next_attempt_at end,
    attempts = d.attempts || jsonb_build_array(i.entry::jsonb)
  from unnest(?::uuid[], ?::boolean[], ?::int[], ?::int[], ?::text[], ?::timestamptz[], ?::timestamptz[], ?::text[])
    as i(id, succeeded, max_attempts, response_code, response_body, at, next_attempt_at, entry)
  where d.id = i.id and d.status in ('pending', 'failed')
  returning d.id, d.event_id, d.status, d.attempt_count`;

/** One attempt's outcome, waiting to be recorded with the others of its batch. */
interface AttemptRecord {
  delivery: Pick<DeliveryContext, 'id' | 'eventId'>;
  attempt: AttemptOutcome & { at: Date };
  options: { maxAttempts: number; nextAttemptAt: Date | null };
}

/** Concurrent attempts share their database round trips: batches of at most this many. */
const BATCH_MAX_ITEMS = 200;
/** Batches in flight at once (one pooled connection each). */
const BATCHES_IN_FLIGHT = 3;
const batchOptions = {
  maxInFlight: BATCHES_IN_FLIGHT,
  maxBatchItems: BATCH_MAX_ITEMS,
  maxBatchBytes: BATCH_MAX_ITEMS,
  sizeOf: () => 1,
};

type Knex = ReturnType<EntityManager['getKnex']>;

/** The bindings of RECORD_ATTEMPTS_SQL: one array per column. */
function attemptColumns(records: AttemptRecord[]): never[] {
  const succeeded = ({ attempt }: AttemptRecord) =>
    attempt.responseCode !== null && attempt.responseCode >= 200 && attempt.responseCode < 300;
  const entry = ({ attempt }: AttemptRecord): DeliveryAttempt => ({
    at: attempt.at.toISOString(),
    response_code: attempt.responseCode,
    duration_ms: attempt.durationMs,
    error: attempt.error,
    response_body: attempt.responseBody,
  });
  return [
    records.map((record) => record.delivery.id),
    records.map(succeeded),
    records.map((record) => record.options.maxAttempts),
    records.map((record) => record.attempt.responseCode),
    records.map((record) => record.attempt.responseBody),
    records.map((record) => record.attempt.at.toISOString()),
    records.map((record) => record.options.nextAttemptAt?.toISOString() ?? null),
    records.map((record) => JSON.stringify(entry(record))),
  ] as never[];
}

/**
 * Every query of the delivery aggregate. The worker's hundreds of concurrent attempts load their
 * deliveries and record their outcomes through group commits: what arrives while a batch is in flight
 * goes to the database together in the next one (at low load, each goes at once, alone).
 * Writes that change events' statuses lock the event rows first, in id order.
 */
@Injectable()
export class DeliveryRepository {
  private readonly loads = new GroupCommit<string, DeliveryContext | null>(
    (ids) => this.loadBatch(ids),
    batchOptions,
  );
  private readonly records = new GroupCommit<AttemptRecord, RecordedAttempt | null>(
    (records) => this.recordBatch(records),
    batchOptions,
  );

  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return this.em.getKnex();
  }

  loadForAttempt(deliveryId: string): Promise<DeliveryContext | null> {
    return this.loads.submit(deliveryId);
  }

  private async loadBatch(ids: string[]): Promise<(DeliveryContext | null)[]> {
    const { rows } = await this.knex.raw(
      `select d.id, d.event_id, d.status, d.attempt_count, d.last_attempted_at, e.endpoint_id, e.method,
              e.headers, e.query, e.body_text, e.body_bytes, dest.id as destination_id,
              dest.url as destination_url, dest.secret, dest.is_active, dest.rate_limit, dest.rate_limit_period,
              dest.max_in_flight, dest.paused, dest.ordering
       from deliveries d
       join events e on e.id = d.event_id
       left join destinations dest on dest.id = d.destination_id
       where d.id = any(?::uuid[])`,
      [ids],
    );
    const byId = new Map<string, DeliveryContext>(
      rows.map((row: Record<string, never>) => [
        row.id,
        {
          id: row.id,
          eventId: row.event_id,
          endpointId: row.endpoint_id,
          status: row.status,
          attemptCount: row.attempt_count,
          lastAttemptedAt: row.last_attempted_at === null ? null : new Date(row.last_attempted_at),
          destination: row.destination_url
            ? {
                id: row.destination_id,
                url: row.destination_url,
                secret: row.secret,
                isActive: row.is_active,
                rateLimit: row.rate_limit,
                rateLimitPeriod: row.rate_limit_period,
                maxInFlight: row.max_in_flight,
                paused: row.paused,
                ordering: row.ordering,
              }
            : null,
          method: row.method,
          headers: row.headers,
          query: row.query,
          body: row.body_bytes ?? Buffer.from(row.body_text ?? '', 'utf8'),
        },
      ]),
    );
    return ids.map((id) => byId.get(id) ?? null);
  }

  /**
   * Records one attempt and moves the delivery and its event on, in one transaction shared with the
   * other attempts of its batch. Resolves null when the delivery was already finished (a duplicate run
   * of its job).
   */
  recordAttempt(
    delivery: Pick<DeliveryContext, 'id' | 'eventId'>,
    attempt: AttemptOutcome & { at: Date },
    options: { maxAttempts: number; nextAttemptAt: Date | null },
  ): Promise<RecordedAttempt | null> {
    return this.records.submit({ delivery, attempt, options });
  }

  private async recordBatch(records: AttemptRecord[]): Promise<(RecordedAttempt | null)[]> {
    // A delivery twice in one batch (a duplicate job run) is recorded once: the later copy finds it finished.
    const firstOfId = new Map<string, number>();
    records.forEach((record, index) => {
      if (!firstOfId.has(record.delivery.id)) firstOfId.set(record.delivery.id, index);
    });
    const unique = [...firstOfId.values()].map((index) => records[index]);
    const eventIds = [...new Set(unique.map((record) => record.delivery.eventId))].sort();
    const results = await this.knex.transaction(async (trx) => {
      const locked = await trx.raw(
        `select id, status, endpoint_id from events where id = any(?::uuid[]) order by id for update`,
        [eventIds],
      );
      const before = new Map<string, { status: EventStatus; endpoint_id: string }>(
        locked.rows.map((row: { id: string; status: EventStatus; endpoint_id: string }) => [row.id, row]),
      );
      const updated = await trx.raw(RECORD_ATTEMPTS_SQL, attemptColumns(unique));
      const moved = new Map<string, { event_id: string; status: DeliveryStatus; attempt_count: number }>(
        updated.rows.map(
          (row: { id: string; event_id: string; status: DeliveryStatus; attempt_count: number }) => [
            row.id,
            row,
          ],
        ),
      );
      const movedEvents = [...new Set([...moved.values()].map((row) => row.event_id))];
      const statuses = new Map<string, EventStatus>();
      if (movedEvents.length > 0) {
        const refreshed = await trx.raw(EVENT_STATUS_SQL, [movedEvents]);
        for (const row of refreshed.rows as { id: string; status: EventStatus }[])
          statuses.set(row.id, row.status);
      }
      const deadLettered = movedEvents.filter(
        (id) => statuses.get(id) === 'dead_letter' && before.get(id)?.status !== 'dead_letter',
      );
      if (deadLettered.length > 0) {
        await trx.raw(
          `insert into dead_letter_alerts (endpoint_id, event_id)
           select endpoint_id, id from events where id = any(?::uuid[])`,
          [deadLettered],
        );
      }
      const alerted = new Set<string>();
      return new Map(
        [...moved].map(([id, row]): [string, RecordedAttempt] => {
          // Only the first delivery of a newly dead event carries the alert.
          const newlyDead = deadLettered.includes(row.event_id) && !alerted.has(row.event_id);
          if (newlyDead) alerted.add(row.event_id);
          return [
            id,
            {
              deliveryStatus: row.status,
              attemptCount: row.attempt_count,
              eventStatus: statuses.get(row.event_id) ?? (before.get(row.event_id)?.status as EventStatus),
              deadLettered: newlyDead,
              endpointId: before.get(row.event_id)?.endpoint_id as string,
            },
          ];
        }),
      );
    });
    return records.map((record, index) =>
      firstOfId.get(record.delivery.id) === index ? (results.get(record.delivery.id) ?? null) : null,
    );
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

  /**
   * Deliveries still owed an attempt whose due time passed `graceSeconds` ago: their job may be lost.
   * Those a paused destination holds are not overdue; of a FIFO destination's, only the next one can be
   * (the others wait for it, not for a job).
   */
  async findOverdue(graceSeconds: number, limit: number): Promise<DueDelivery[]> {
    const { rows } = await this.knex.raw(
      `(select d.id, d.attempt_count, d.next_attempt_at from deliveries d
        where d.status in ('pending', 'failed') and d.next_attempt_at < now() - make_interval(secs => ?)
          and not exists (select 1 from destinations p
                          where p.id = d.destination_id and (p.paused or p.ordering = 'fifo'))
        order by d.next_attempt_at limit ?)
       union all
       (select head.id, head.attempt_count, head.next_attempt_at from destinations p
        cross join lateral (${fifoHeadSql('p.id')}) head
        where p.ordering = 'fifo' and not p.paused
          and head.next_attempt_at < now() - make_interval(secs => ?))
       order by next_attempt_at limit ?`,
      [graceSeconds, limit, graceSeconds, limit],
    );
    return rows.map((row: { id: string; attempt_count: number }) => ({
      id: row.id,
      attemptCount: row.attempt_count,
    }));
  }

  /** The next delivery of a FIFO destination, or null when none waits. */
  async fifoHead(destinationId: string): Promise<DueDelivery | null> {
    const { rows } = await this.knex.raw(fifoHeadSql('?'), [destinationId]);
    const head = rows[0] as { id: string; attempt_count: number } | undefined;
    return head ? { id: head.id, attemptCount: head.attempt_count } : null;
  }

  /** Folds the event-count deltas of busy endpoints (see event-counts.ts). */
  foldEventCounts(): Promise<void> {
    return foldEventCounts(this.knex, EVENT_COUNTS_FOLD_AT);
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
