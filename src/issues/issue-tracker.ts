import { Injectable, Logger } from '@nestjs/common';
import { type Knex, type PreparedStatement, runPrepared } from '../database/sql';
import type { FailureKind } from '../delivery/delivery-sender';
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
  /** It delivered at least once: its unresolved issues resolve, its failure count starts again. */
  succeeded: boolean;
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
    select * from unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::int[], ?::timestamptz[],
                         ?::timestamptz[], ?::uuid[])
    order by 2, 3
    on conflict (destination_id, kind) where status <> 'resolved' do update set
      failure_count = issues.failure_count + excluded.failure_count,
      summary = case when excluded.last_seen_at >= issues.last_seen_at then excluded.summary else issues.summary end,
      last_event_id = case when excluded.last_seen_at >= issues.last_seen_at then excluded.last_event_id
                           else issues.last_event_id end,
      last_seen_at = greatest(issues.last_seen_at, excluded.last_seen_at)
    returning *, (xmax = 0) as opened)
  select ${ISSUE_COLUMNS}, i.opened from upserted i ${ISSUE_JOINS}`,
};

/**
 * Moves each destination's count of consecutive failed attempts on (from none after a success in the
 * batch) and pauses those whose count reached their `auto_pause_after`. Only rows that change are locked
 * and written (a destination that keeps delivering is not), in id order, and only as strongly as the update
 * needs (`no key update`): a capture inserting deliveries checks the destination's key (`key share`) and
 * must not wait for this batch to commit. Answers the newly paused.
 */
const COUNT_FAILURES: PreparedStatement = {
  name: 'hooktrail-count-consecutive-failures',
  text: `
  with input as (select * from unnest(?::uuid[], ?::boolean[], ?::int[]) as i(id, reset, failures)),
  locked as (
    select d.id, d.paused as was_paused, d.auto_pause_after,
           case when i.reset then i.failures else d.consecutive_failures + i.failures end as failures
    from destinations d join input i on i.id = d.id
    where i.failures > 0 or d.consecutive_failures <> 0
    order by d.id for no key update of d),
  counted as (
    update destinations d set
      consecutive_failures = l.failures,
      paused = d.paused or l.failures >= coalesce(l.auto_pause_after, 2147483647),
      paused_reason = case when not l.was_paused and l.failures >= coalesce(l.auto_pause_after, 2147483647)
                           then format('auto-paused after %s consecutive failed attempts', l.auto_pause_after)
                           else d.paused_reason end
    from locked l where d.id = l.id
    returning d.id, d.endpoint_id, d.url, d.paused_reason, d.auto_pause_after, (d.paused and not l.was_paused) as auto_paused)
  select * from counted where auto_paused`,
};

/** Each destination's attempts of the batch: did it deliver, and which failures came before and after its last success. */
function byDestination(attempts: readonly TrackedAttempt[]): DestinationAttempts[] {
  const groups = new Map<string, DestinationAttempts>();
  const ordered = [...attempts].sort((a, b) => a.at.getTime() - b.at.getTime());
  for (const attempt of ordered) {
    if (!attempt.succeeded && !attempt.failure) continue;
    let group = groups.get(attempt.destinationId);
    if (!group) {
      group = { destinationId: attempt.destinationId, succeeded: false, resolvedFailures: [], failures: [] };
      groups.set(attempt.destinationId, group);
    }
    if (attempt.succeeded) {
      group.succeeded = true;
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

/** Counts failures into their issues, opening those not open yet; answers the issues opened. */
async function countFailures(trx: Knex, failures: readonly TrackedAttempt[]): Promise<Issue[]> {
  const groups = failureGroups(failures);
  if (groups.length === 0) return [];
  const { rows } = await runPrepared<{ rows: (IssueRow & { opened: boolean })[] }>(trx, UPSERT, [
    groups.map((group) => group.first.endpointId),
    groups.map((group) => group.first.destinationId),
    groups.map((group) => group.first.failure!.kind),
    groups.map((group) => group.last.failure!.summary),
    groups.map((group) => group.count),
    groups.map((group) => group.first.at.toISOString()),
    groups.map((group) => group.last.at.toISOString()),
    groups.map((group) => group.last.eventId),
  ]);
  return rows.filter((row) => row.opened).map(issueOf);
}

/**
 * Issues and auto-pause, kept as attempts are recorded: inside the transaction that records a batch of
 * attempts, one statement each resolves the issues of the destinations that delivered, counts the
 * failures into their issues (opening those not open yet), and counts consecutive failures (pausing
 * destinations that reached their `auto_pause_after`). The notifications go into the channels' outbox in
 * the same transaction, so what was opened, resolved or paused is told exactly once, even should the
 * process stop right after the commit (the notifications' sweep schedules what `announce` could not).
 */
@Injectable()
export class IssueTracker {
  private readonly logger = new Logger(IssueTracker.name);

  constructor(private readonly notifier: Notifier) {}

  async track(trx: Knex, attempts: readonly TrackedAttempt[]): Promise<TrackedChanges> {
    const destinations = byDestination(attempts);
    const changes: TrackedChanges = { opened: [], resolved: [], paused: [], channelIds: [] };
    if (destinations.length === 0) return changes;
    // Failures, then the success that resolves their issues, then the failures after it, in that order.
    changes.opened.push(
      ...(await countFailures(
        trx,
        destinations.flatMap((each) => each.resolvedFailures),
      )),
    );
    const delivered = destinations.filter((destination) => destination.succeeded);
    if (delivered.length > 0) {
      const { rows } = await runPrepared<{ rows: IssueRow[] }>(trx, RESOLVE, [
        new Date().toISOString(),
        delivered.map((destination) => destination.destinationId),
      ]);
      changes.resolved = rows.map(issueOf);
    }
    changes.opened.push(
      ...(await countFailures(
        trx,
        destinations.flatMap((each) => each.failures),
      )),
    );
    const { rows } = await runPrepared<{
      rows: {
        id: string;
        endpoint_id: string;
        url: string;
        paused_reason: string;
        auto_pause_after: number;
      }[];
    }>(trx, COUNT_FAILURES, [
      destinations.map((destination) => destination.destinationId),
      destinations.map((destination) => destination.succeeded),
      destinations.map((destination) => destination.failures.length),
    ]);
    changes.paused = rows.map((row) => ({
      id: row.id,
      endpointId: row.endpoint_id,
      url: row.url,
      pausedReason: row.paused_reason,
      autoPauseAfter: row.auto_pause_after,
    }));
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
