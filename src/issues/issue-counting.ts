import { type Knex, type PreparedStatement, runPrepared } from '../database/sql';
import { ISSUE_COLUMNS, ISSUE_JOINS, type Issue, type IssueRow, issueOf } from './issue';
import type { TrackedAttempt } from './tracked-attempts';

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
export async function countFailures(trx: Knex, failures: readonly TrackedAttempt[]): Promise<Issue[]> {
  const rows = await withFailureGroups<IssueRow & { opened: boolean }>(trx, UPSERT, failures);
  return rows.filter((row) => row.opened).map(issueOf);
}

/**
 * Counts stale failures (started before a success of their destination that an earlier batch recorded)
 * into their issues, without opening one (COUNT_STALE).
 */
export async function countStaleFailures(trx: Knex, failures: readonly TrackedAttempt[]): Promise<void> {
  await withFailureGroups(trx, COUNT_STALE, failures);
}

/** Resolves the unresolved issues of the destinations that delivered; answers the issues resolved. */
export async function resolveIssues(trx: Knex, destinationIds: readonly string[]): Promise<Issue[]> {
  if (destinationIds.length === 0) return [];
  const { rows } = await runPrepared<{ rows: IssueRow[] }>(trx, RESOLVE, [
    new Date().toISOString(),
    destinationIds,
  ]);
  return rows.map(issueOf);
}
