import { EntityManager } from '@mikro-orm/postgresql';
import { Inject, Injectable } from '@nestjs/common';
import { GroupCommit } from '../common/group-commit';
import { retryingDeadlocks } from '../database/deadlocks';
import { type Knex, type PreparedStatement, runPrepared } from '../database/sql';
import type { FlowControl } from '../model/destination.entity';
import type { SecretBox } from '../secrets/secret-box';
import { SECRET_BOX } from '../secrets/secrets.module';
import { addAttemptStats, type CountedAttempt } from '../stats/attempt-stats';
import type { EventStatus } from '../model/event.entity';
import { type LockedEvent, lockEvents, refreshEventStatuses } from '../events/event-status';
import { IssueTracker, type TrackedChanges } from '../issues/issue-tracker';
import { addDeadLetterAlerts } from '../mail/dead-letter-alerts';
import type { TrackedAttempt } from '../issues/tracked-attempts';
import { type AttemptOutcome, failureSummary } from '../outbound/delivery-sender';
import type { DeliveryAttempt, DeliveryStatus } from '../model/delivery.entity';

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
  /** The exact bytes to send; empty once sent (DeliveryAttemptService lets it go before the record). */
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

/** Moves each delivery of the batch on by one attempt, unless it was already finished (a duplicate job run). */
const RECORD_ATTEMPTS: PreparedStatement = {
  name: 'hooktrail-record-attempts',
  text: `
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
  returning d.id, d.event_id, d.destination_id, d.status, d.attempt_count`,
};

interface MovedDelivery {
  id: string;
  event_id: string;
  destination_id: string | null;
  status: DeliveryStatus;
  attempt_count: number;
}

/**
 * Each delivery with its event and destination as they are now, read one delivery at a time through the
 * three primary keys (a lateral subquery, which `limit 1` keeps from being merged into a join), whatever
 * the planner believes of the tables. Written as a join on `d.id = any(...)`, each pooled connection kept
 * the generic plan it made while the tables were small: a sequential scan of every delivery, 3.5 ms a
 * batch of 24 in a drain after the capture benchmark (BENCHMARKS.md, 2026-11-29).
 */
export const LOAD_FOR_ATTEMPTS: PreparedStatement = {
  name: 'hooktrail-load-for-attempts',
  text: `select loaded.*
         from unnest(?::uuid[]) as ids(id)
         cross join lateral (
           select d.id, d.event_id, d.status, d.attempt_count, d.last_attempted_at, e.endpoint_id, e.method,
                  e.headers, e.query, e.body_text, e.body_bytes, dest.id as destination_id,
                  dest.url as destination_url, dest.secret, dest.is_active, dest.rate_limit,
                  dest.rate_limit_period, dest.max_in_flight, dest.paused, dest.ordering
           from deliveries d
           join events e on e.id = d.event_id
           left join destinations dest on dest.id = d.destination_id
           where d.id = ids.id
           limit 1) loaded`,
};

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

/** The bindings of RECORD_ATTEMPTS: one array per column. */
function attemptColumns(records: AttemptRecord[]): unknown[] {
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
  ];
}

/** The attempts recorded (not those of deliveries already finished), as IssueTracker takes them. */
function trackedAttempts(
  records: AttemptRecord[],
  moved: Map<string, MovedDelivery>,
  events: Map<string, LockedEvent>,
): TrackedAttempt[] {
  return records.flatMap(({ delivery, attempt }): TrackedAttempt[] => {
    const row = moved.get(delivery.id);
    const event = events.get(delivery.eventId);
    if (!row?.destination_id || !event) return [];
    return [
      {
        destinationId: row.destination_id,
        endpointId: event.endpointId,
        eventId: delivery.eventId,
        at: attempt.at,
        succeeded: attempt.responseCode !== null && attempt.failureKind === null,
        failure: attempt.failureKind ? { kind: attempt.failureKind, summary: failureSummary(attempt) } : null,
      },
    ];
  });
}

/** The attempts recorded, as the destinations' statistics count them. */
function countedAttempts(records: AttemptRecord[], moved: Map<string, MovedDelivery>): CountedAttempt[] {
  return records.flatMap(({ delivery, attempt }): CountedAttempt[] => {
    const destinationId = moved.get(delivery.id)?.destination_id;
    if (!destinationId) return [];
    return [
      { destinationId, at: attempt.at, durationMs: attempt.durationMs, responseCode: attempt.responseCode },
    ];
  });
}

/**
 * The unit of work of attempts: the worker's hundreds of concurrent attempts load their deliveries and
 * record their outcomes through group commits: what arrives while a batch is in flight goes to the database
 * together in the next one (at low load, each goes at once, alone). Recording is one transaction across
 * the engines, each table written by its owner's code: the deliveries here, their events' statuses
 * (events/event-status.ts), the dead-letter alert outbox (mail/dead-letter-alerts.ts), the destinations'
 * health and issues (IssueTracker) and their statistics (stats/attempt-stats.ts).
 */
@Injectable()
export class AttemptRecorder {
  private readonly loads = new GroupCommit<string, DeliveryContext | null>(
    (ids) => this.loadBatch(ids),
    batchOptions,
  );
  private readonly records = new GroupCommit<AttemptRecord, RecordedAttempt | null>(
    (records) => this.recordBatch(records),
    batchOptions,
  );

  constructor(
    private readonly em: EntityManager,
    @Inject(SECRET_BOX) private readonly secrets: SecretBox,
    private readonly issues: IssueTracker,
  ) {}

  private get knex(): Knex {
    return this.em.getKnex();
  }

  loadForAttempt(deliveryId: string): Promise<DeliveryContext | null> {
    return this.loads.submit(deliveryId);
  }

  private async loadBatch(ids: string[]): Promise<(DeliveryContext | null)[]> {
    const { rows } = await runPrepared<{ rows: Record<string, never>[] }>(this.knex, LOAD_FOR_ATTEMPTS, [
      ids,
    ]);
    const byId = new Map<string, DeliveryContext>(
      rows.map((row) => [
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
                secret: row.secret === null ? null : this.secrets.open(row.secret),
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
    // Each attempt gets an object of its own, since it lets go of the body once sent (a delivery twice in
    // one batch, a duplicate run of its job, still sends it whole).
    return ids.map((id) => {
      const context = byId.get(id);
      return context ? { ...context } : null;
    });
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
    const { results, changes } = await this.recordUnique(unique);
    await this.issues.announce(changes);
    return records.map((record, index) =>
      firstOfId.get(record.delivery.id) === index ? (results.get(record.delivery.id) ?? null) : null,
    );
  }

  /**
   * Records the batch (each delivery once) in one transaction, tried again when PostgreSQL breaks a
   * deadlock with another writer by ending it (the attempts are recorded; none is sent again).
   */
  private recordUnique(
    unique: AttemptRecord[],
  ): Promise<{ results: Map<string, RecordedAttempt>; changes: TrackedChanges }> {
    return retryingDeadlocks(() => this.knex.transaction((trx) => this.recordInTransaction(trx, unique)));
  }

  /**
   * Moves the deliveries and their events on, writes the dead-letter alerts, and keeps the destinations'
   * issues and consecutive failures (IssueTracker) and their attempts' statistics.
   */
  private async recordInTransaction(
    trx: Knex,
    unique: AttemptRecord[],
  ): Promise<{ results: Map<string, RecordedAttempt>; changes: TrackedChanges }> {
    const eventIds = [...new Set(unique.map((record) => record.delivery.eventId))];
    const before = await lockEvents(trx, eventIds);
    const updated = await runPrepared<{ rows: MovedDelivery[] }>(
      trx,
      RECORD_ATTEMPTS,
      attemptColumns(unique),
    );
    const moved = new Map<string, MovedDelivery>(updated.rows.map((row) => [row.id, row]));
    const movedEvents = [...new Set([...moved.values()].map((row) => row.event_id))];
    const statuses = await refreshEventStatuses(trx, movedEvents);
    const deadLettered = movedEvents.filter(
      (id) => statuses.get(id) === 'dead_letter' && before.get(id)?.status !== 'dead_letter',
    );
    await addDeadLetterAlerts(trx, deadLettered);
    const changes = await this.issues.track(trx, trackedAttempts(unique, moved, before));
    // Last, so that the destinations' statistics rows are held for the shortest time.
    await addAttemptStats(trx, countedAttempts(unique, moved));
    const alerted = new Set<string>();
    const results = new Map(
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
            endpointId: before.get(row.event_id)?.endpointId as string,
          },
        ];
      }),
    );
    return { results, changes };
  }

  /** Closes a delivery without sending: its destination was removed or deactivated during its retries. */
  async abandon(
    delivery: Pick<DeliveryContext, 'id' | 'eventId'>,
    reason: string,
  ): Promise<RecordedAttempt | null> {
    return this.recordAttempt(
      delivery,
      {
        at: new Date(),
        responseCode: null,
        responseBody: null,
        durationMs: 0,
        error: reason,
        failureKind: null,
      },
      { maxAttempts: 0, nextAttemptAt: null },
    );
  }
}
