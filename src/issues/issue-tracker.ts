import { Injectable, Logger } from '@nestjs/common';
import { type Knex, type PreparedStatement, runPrepared } from '../database/sql';
import type { FailureKind } from '../outbound/delivery-sender';
import type { NotificationEvent } from '../notifications/notification-events';
import { Notifier } from '../notifications/notifier.service';
import { ISSUE_COLUMNS, ISSUE_JOINS, type Issue, type IssueRow, issueOf } from './issue';
import { toIssueDto } from './issue.presenter';

/** One recorded attempt, as issues and auto-pause see it. */
export interface TrackedAttempt {
  destinationId: string;
  endpointId: string;
  eventId: string;
  at: Date;
  /** 2xx: the destination delivers again. */
  succeeded: boolean;
  /** Its failure; null for a success, and for a delivery closed without an attempt (not the destination's fault). */
  failure: { kind: FailureKind; summary: string } | null;
}

/** A destination that paused itself with this batch. */
export interface AutoPausedDestination {
  id: string;
  endpointId: string;
  url: string;
  pausedReason: string;
  autoPauseAfter: number;
}

/** What a batch of attempts changed: issues opened and resolved, destinations paused, channels to wake. */
export interface TrackedChanges {
  opened: Issue[];
  resolved: Issue[];
  paused: AutoPausedDestination[];
  /** The notification channels whose outbox got a message in the transaction (to schedule once committed). */
  channelIds: string[];
}

/** A destination's attempts of one batch, in the order they were made. */
interface DestinationAttempts {
  destinationId: string;
  /**
   * When its last success of the batch started; null when it did not deliver. It delivered: its unresolved
   * issues resolve, its failure count starts again.
   */
  succeededAt: Date | null;
  /** The failures before its last success in the batch: counted into issues that this success resolves. */
  resolvedFailures: TrackedAttempt[];
  /** The failures after its last success in the batch (all of them, when it did not deliver). */
  failures: TrackedAttempt[];
}

/** Resolves the unresolved issues of the destinations that delivered. */
const RESOLVE: PreparedStatement = {
  name: 'hooktrail-resolve-issues',
  text: `
  with resolved as (
    update issues set status = 'resolved', resolved_at = ?
    where id in (select id from issues where destination_id = any(?::uuid[]) and status <> 'resolved'
                 order by id for update)
    returning *)
  select ${ISSUE_COLUMNS} from resolved i ${ISSUE_JOINS}`,
};

/** A batch's failures by (destination, kind): `unnest` of failureGroups' eight arrays, as issues' columns. */
const FAILURE_GROUPS = `
    unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::int[], ?::timestamptz[], ?::timestamptz[],
           ?::uuid[])
      as g(endpoint_id, destination_id, kind, summary, failure_count, first_seen_at, last_seen_at,
           last_event_id)`;

/** What counting failures `from` into the issue `into` sets: the count, times, latest summary and event. */
const countedInto = (into: string, from: string) => `
      failure_count = ${into}.failure_count + ${from}.failure_count,
      summary = case when ${from}.last_seen_at >= ${into}.last_seen_at then ${from}.summary
                     else ${into}.summary end,
      last_event_id = case when ${from}.last_seen_at >= ${into}.last_seen_at then ${from}.last_event_id
                           else ${into}.last_event_id end,
      first_seen_at = least(${into}.first_seen_at, ${from}.first_seen_at),
      last_seen_at = greatest(${into}.last_seen_at, ${from}.last_seen_at)`;

/**
 * Counts each (destination, kind) group of failures into its unresolved issue, or opens one: the partial
 * unique index makes workers failing at once share one issue. Rows go in key order (no deadlock between
 * two batches); `xmax = 0` tells an inserted row from an updated one.
 */
const UPSERT: PreparedStatement = {
  name: 'hooktrail-count-issue-failures',
  text: `
  with upserted as (
    insert into issues (endpoint_id, destination_id, kind, summary, failure_count, first_seen_at,
                        last_seen_at, last_event_id)
    select * from ${FAILURE_GROUPS}
    order by destination_id, kind
    on conflict (destination_id, kind) where status <> 'resolved'
    do update set${countedInto('issues', 'excluded')}
    returning *, (xmax = 0) as opened)
  select ${ISSUE_COLUMNS}, i.opened from upserted i ${ISSUE_JOINS}`,
};

/**
 * Counts each (destination, kind) group of stale failures (started before a success of their destination
 * that an earlier batch recorded) into the issue of their kind that is unresolved, else into the latest
 * one resolved after they started (by that success): a stale failure never opens an issue, since its
 * destination has delivered since. A group with no such issue is recorded in a new issue that is resolved
 * already (and told to nobody), so that issues still count every failure.
 */
const COUNT_STALE: PreparedStatement = {
  name: 'hooktrail-count-stale-failures',
  text: `
  with target as (
    select g.*, (select i.id from issues i
                 where i.destination_id = g.destination_id and i.kind = g.kind
                   and (i.status <> 'resolved' or i.resolved_at >= g.first_seen_at)
                 order by i.status = 'resolved', i.resolved_at desc limit 1) as issue_id
    from ${FAILURE_GROUPS}),
  counted as (
    update issues i set${countedInto('i', 't')}
    from target t where i.id = t.issue_id)
  insert into issues (endpoint_id, destination_id, kind, summary, failure_count, first_seen_at, last_seen_at,
                      last_event_id, status, resolved_at)
  select endpoint_id, destination_id, kind, summary, failure_count, first_seen_at, last_seen_at,
         last_event_id, 'resolved', now()
  from target where issue_id is null`,
};

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

/** Each destination's attempts of the batch: its last success, and the failures before and after it. */
function byDestination(attempts: readonly TrackedAttempt[]): DestinationAttempts[] {
  const groups = new Map<string, DestinationAttempts>();
  const ordered = [...attempts].sort((a, b) => a.at.getTime() - b.at.getTime());
  for (const attempt of ordered) {
    if (!attempt.succeeded && !attempt.failure) continue;
    let group = groups.get(attempt.destinationId);
    if (!group) {
      group = { destinationId: attempt.destinationId, succeededAt: null, resolvedFailures: [], failures: [] };
      groups.set(attempt.destinationId, group);
    }
    if (attempt.succeeded) {
      group.succeededAt = attempt.at;
      group.resolvedFailures.push(...group.failures);
      group.failures = [];
    } else {
      group.failures.push(attempt);
    }
  }
  return [...groups.values()].sort((a, b) => (a.destinationId < b.destinationId ? -1 : 1));
}

/** One row per (destination, kind): how many failures, the first and the latest. */
function failureGroups(failures: readonly TrackedAttempt[]) {
  const groups = new Map<string, { first: TrackedAttempt; last: TrackedAttempt; count: number }>();
  for (const attempt of failures) {
    const key = `${attempt.destinationId}/${attempt.failure!.kind}`;
    const group = groups.get(key);
    if (group) {
      group.last = attempt;
      group.count++;
    } else groups.set(key, { first: attempt, last: attempt, count: 1 });
  }
  return [...groups.values()];
}

/** Runs `statement` with the failures' groups bound as FAILURE_GROUPS (none: not run). */
async function withFailureGroups<TRow>(
  trx: Knex,
  statement: PreparedStatement,
  failures: readonly TrackedAttempt[],
): Promise<TRow[]> {
  const groups = failureGroups(failures);
  if (groups.length === 0) return [];
  const { rows } = await runPrepared<{ rows: TRow[] }>(trx, statement, [
    groups.map((group) => group.first.endpointId),
    groups.map((group) => group.first.destinationId),
    groups.map((group) => group.first.failure!.kind),
    groups.map((group) => group.last.failure!.summary),
    groups.map((group) => group.count),
    groups.map((group) => group.first.at.toISOString()),
    groups.map((group) => group.last.at.toISOString()),
    groups.map((group) => group.last.eventId),
  ]);
  return rows;
}

/** Counts failures into their issues, opening those not open yet; answers the issues opened. */
async function countFailures(trx: Knex, failures: readonly TrackedAttempt[]): Promise<Issue[]> {
  const rows = await withFailureGroups<IssueRow & { opened: boolean }>(trx, UPSERT, failures);
  return rows.filter((row) => row.opened).map(issueOf);
}

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

/**
 * Issues and auto-pause, kept as attempts are recorded: inside the transaction that records a batch of
 * attempts, one statement keeps each destination's latest success and counts its consecutive failures
 * (pausing destinations that reached their `auto_pause_after`), then the failures are counted into their
 * issues (opening those not open yet) and the issues of the destinations that delivered resolve. A failure
 * that started before its destination's latest recorded success is stale, its destination having
 * delivered since: it is counted into an issue, but opens none and does not count toward auto-pause (a
 * request that hung until its time-out, recorded after the recovered destination took later ones, neither
 * reopens the issue that recovery resolved nor pauses the destination). The notifications go into the
 * channels' outbox in the same transaction, so what was opened, resolved or paused is told exactly once,
 * even should the process stop right after the commit (the notifications' sweep schedules what `announce`
 * could not).
 */
@Injectable()
export class IssueTracker {
  private readonly logger = new Logger(IssueTracker.name);

  constructor(private readonly notifier: Notifier) {}

  async track(trx: Knex, attempts: readonly TrackedAttempt[]): Promise<TrackedChanges> {
    const destinations = byDestination(attempts);
    const changes: TrackedChanges = { opened: [], resolved: [], paused: [], channelIds: [] };
    if (destinations.length === 0) return changes;
    const counted = destinations.flatMap((each) => each.failures);
    const before = destinations.flatMap((each) => each.resolvedFailures);
    const failures = [...before, ...counted];
    const afterSuccess = new Set(counted);
    const { rows } = await runPrepared<{ rows: TrackedDestination[] }>(trx, TRACK_DESTINATIONS, [
      destinations.map((destination) => destination.destinationId),
      destinations.map((destination) => destination.succeededAt?.toISOString() ?? null),
      failures.map((failure) => failure.destinationId),
      failures.map((failure) => failure.at.toISOString()),
      failures.map((failure) => afterSuccess.has(failure)),
    ]);
    changes.paused = rows
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
    const isStale = (failure: TrackedAttempt) =>
      failure.at.getTime() < (knownSuccess.get(failure.destinationId) ?? -Infinity);
    const isFresh = (failure: TrackedAttempt) => !isStale(failure);
    await withFailureGroups(trx, COUNT_STALE, failures.filter(isStale));
    // Failures, then the success that resolves their issues, then the failures after it, in that order.
    changes.opened.push(...(await countFailures(trx, before.filter(isFresh))));
    const delivered = destinations.filter((destination) => destination.succeededAt !== null);
    if (delivered.length > 0) {
      const resolved = await runPrepared<{ rows: IssueRow[] }>(trx, RESOLVE, [
        new Date().toISOString(),
        delivered.map((destination) => destination.destinationId),
      ]);
      changes.resolved = resolved.rows.map(issueOf);
    }
    changes.opened.push(...(await countFailures(trx, counted.filter(isFresh))));
    for (const event of this.notifications(changes))
      changes.channelIds.push(...(await this.notifier.record(trx, event)));
    return changes;
  }

  /** Once the transaction has committed: schedules the channels' messages, and logs what changed. */
  async announce(changes: TrackedChanges): Promise<void> {
    for (const destination of changes.paused)
      this.logger.warn(
        { destinationId: destination.id, reason: destination.pausedReason },
        'destination paused itself',
      );
    if (changes.channelIds.length > 0) await this.notifier.dispatch(changes.channelIds);
  }

  private notifications(changes: TrackedChanges): NotificationEvent[] {
    return [
      ...changes.opened.map((issue): NotificationEvent => ({
        endpointId: issue.endpointId,
        type: 'issue.opened',
        data: { issue: toIssueDto(issue) },
      })),
      ...changes.resolved.map((issue): NotificationEvent => ({
        endpointId: issue.endpointId,
        type: 'issue.resolved',
        data: { issue: toIssueDto(issue) },
      })),
      ...changes.paused.map((destination): NotificationEvent => ({
        endpointId: destination.endpointId,
        type: 'destination.paused',
        data: {
          endpoint_id: destination.endpointId,
          destination: {
            id: destination.id,
            url: destination.url,
            paused: true,
            paused_reason: destination.pausedReason,
            auto_pause_after: destination.autoPauseAfter,
          },
        },
      })),
    ];
  }
}
