import { type Knex, type PreparedStatement, runPrepared } from '../database/sql';
import type { DestinationAttempts, TrackedAttempt } from './tracked-attempts';

/** A destination that paused itself with this batch. */
export interface AutoPausedDestination {
  id: string;
  endpointId: string;
  url: string;
  pausedReason: string;
  autoPauseAfter: number;
}

/**
 * Keeps the start of each destination's latest success (`last_success_at`, moved on at most once a second:
 * a destination that keeps delivering is written once a second, not by every batch), moves its count of
 * consecutive failed attempts on (from none after a success in the batch), and pauses those whose count
 * reached their `auto_pause_after`. A failure that started before the recorded success is stale (a request
 * that timed out after a later one was delivered) and is not counted. Only rows that change are locked and
 * written, in id order, and only as strongly as the update needs (`no key update`): a capture inserting
 * deliveries checks the destination's key (`key share`) and must not wait for this batch to commit.
 * Bindings: each destination and the start of its last success in the batch (or null), then each failure's
 * destination, start, and whether it came after that success (those before it are not counted, but lock
 * the row all the same, so that its recorded success is answered for them). Answers every row written,
 * with the success recorded before this batch and whether it paused itself now.
 */
const TRACK_DESTINATIONS: PreparedStatement = {
  name: 'hooktrail-track-destinations',
  text: `
  with input as (select * from unnest(?::uuid[], ?::timestamptz[]) as i(id, succeeded_at)),
  failed as (select * from unnest(?::uuid[], ?::timestamptz[], ?::boolean[]) as f(id, at, counted)),
  locked as (
    select d.id, d.paused as was_paused, d.auto_pause_after, d.last_success_at as known_success_at,
           greatest(d.last_success_at, i.succeeded_at) as last_success_at,
           case when i.succeeded_at is null then d.consecutive_failures + f.fresh else f.fresh end as failures
    from destinations d
    join input i on i.id = d.id
    cross join lateral (select count(*)::int as fresh from failed
                        where failed.id = d.id and failed.counted
                          and failed.at >= coalesce(d.last_success_at, '-infinity')) f
    where d.consecutive_failures <> 0 or exists (select 1 from failed where failed.id = d.id)
       or i.succeeded_at >= coalesce(d.last_success_at + interval '1 second', '-infinity')
    order by d.id for no key update of d),
  counted as (
    update destinations d set
      consecutive_failures = l.failures,
      last_success_at = l.last_success_at,
      paused = d.paused or l.failures >= coalesce(l.auto_pause_after, 2147483647),
      paused_reason = case when not l.was_paused and l.failures >= coalesce(l.auto_pause_after, 2147483647)
                           then format('auto-paused after %s consecutive failed attempts', l.auto_pause_after)
                           else d.paused_reason end
    from locked l where d.id = l.id
    returning d.id, d.endpoint_id, d.url, d.paused_reason, d.auto_pause_after, l.known_success_at,
              (d.paused and not l.was_paused) as auto_paused)
  select * from counted`,
};

/** A destination written by TRACK_DESTINATIONS. */
interface TrackedDestination {
  id: string;
  endpoint_id: string;
  url: string;
  paused_reason: string | null;
  auto_pause_after: number;
  known_success_at: Date | string | null;
  auto_paused: boolean;
}

/** What a batch's attempts did to their destinations' health. */
export interface DestinationHealth {
  /** The destinations that paused themselves with this batch. */
  paused: AutoPausedDestination[];
  /**
   * Whether a failure is stale: it started before its destination's success recorded by an earlier batch
   * (its destination has delivered since).
   */
  isStale: (failure: TrackedAttempt) => boolean;
}

/**
 * Keeps each destination's health as a batch of its attempts is recorded, in the batch's transaction
 * (TRACK_DESTINATIONS): its latest success, its count of consecutive failed attempts (`counted`, the
 * failures after its last success in the batch; `before`, those before it, lock its row but count for
 * nothing), and auto-pause.
 */
export async function trackDestinationHealth(
  trx: Knex,
  destinations: readonly DestinationAttempts[],
  before: readonly TrackedAttempt[],
  counted: readonly TrackedAttempt[],
): Promise<DestinationHealth> {
  const failures = [...before, ...counted];
  const afterSuccess = new Set(counted);
  const { rows } = await runPrepared<{ rows: TrackedDestination[] }>(trx, TRACK_DESTINATIONS, [
    destinations.map((destination) => destination.destinationId),
    destinations.map((destination) => destination.succeededAt?.toISOString() ?? null),
    failures.map((failure) => failure.destinationId),
    failures.map((failure) => failure.at.toISOString()),
    failures.map((failure) => afterSuccess.has(failure)),
  ]);
  const paused = rows
    .filter((row) => row.auto_paused)
    .map((row) => ({
      id: row.id,
      endpointId: row.endpoint_id,
      url: row.url,
      pausedReason: row.paused_reason!,
      autoPauseAfter: row.auto_pause_after,
    }));
  const knownSuccess = new Map(
    rows.map((row) => [
      row.id,
      row.known_success_at === null ? -Infinity : new Date(row.known_success_at).getTime(),
    ]),
  );
  return {
    paused,
    isStale: (failure) => failure.at.getTime() < (knownSuccess.get(failure.destinationId) ?? -Infinity),
  };
}
