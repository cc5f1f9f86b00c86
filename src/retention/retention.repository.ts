import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { PLANS } from '../common/plans';
import type { PlanRetention } from '../config/environment';
import { deleteEventsNotReplayedSince } from '../events/event-deletion';
import { EVENT_STATUSES, type EventStatus } from '../model/event.entity';

/** The statuses whose events expire: all but `dead_letter`, which is kept (design.md, "Retention"). */
export const EXPIRING_STATUSES = EVENT_STATUSES.filter((status) => status !== 'dead_letter');

/** One endpoint's events of one status: what a pass deletes, a batch at a time. */
export interface ExpiringGroup {
  endpointId: string;
  status: EventStatus;
}

/** The last event a batch deleted of its group (`receivedAt` as PostgreSQL wrote it, to the microsecond). */
export interface GroupCursor {
  receivedAt: string;
  id: string;
}

export interface DeletedBatch {
  /** The expired events the batch took; those a replay made since kept are not deleted. */
  taken: number;
  deleted: number;
  /** Where the next batch of the group starts (after this event); null when none was taken. */
  last: GroupCursor | null;
}

type GroupRow = { endpoint_id: string; status: EventStatus };

/**
 * `retention (id, days)`: how many days each endpoint keeps its events, its plan's (its owner's, or `team`
 * for a team's endpoint) or its own `retention_days` when shorter. Parameters: the plans and their days.
 */
const RETENTION_DAYS = `retention as (
  select p.id, least(plans.days, coalesce(p.retention_days, plans.days)) as days
  from endpoints p
  join users u on u.id = p.user_id
  join unnest(?::text[], ?::int[]) as plans(plan, days)
    on plans.plan = case when p.team_id is null then u.plan else 'team' end)`;

/** RETENTION_DAYS's parameters. */
const retentionParameters = (retention: PlanRetention) => [
  [...PLANS],
  PLANS.map((plan) => retention.days[plan]),
];

/** Before every event: the first batch of a group starts here. */
const GROUP_START: GroupCursor = { receivedAt: '-infinity', id: '00000000-0000-0000-0000-000000000000' };

/**
 * The queries of retention. An endpoint keeps its events the days of its plan (its owner's, or `team` for a
 * team's endpoint), or its own `retention_days` when shorter. Both queries read `events` through the
 * existing (endpoint_id, status, received_at, id) index (events_endpoint_status_received_index), one status
 * at a time, so kept dead-lettered events are never visited, however many there are.
 */
@Injectable()
export class RetentionRepository {
  constructor(private readonly em: EntityManager) {}

  /** Every (endpoint, expiring status) with at least one event past its retention, in a fixed order. */
  async expiringGroups(retention: PlanRetention): Promise<ExpiringGroup[]> {
    const { rows } = await this.em.getKnex().raw<{ rows: GroupRow[] }>(
      `with ${RETENTION_DAYS}
       select r.id as endpoint_id, s.status
       from retention r cross join unnest(?::text[]) as s(status)
       where exists (select 1 from events e
                     where e.endpoint_id = r.id and e.status = s.status
                       and e.received_at < now() - make_interval(days => r.days))
       order by r.id, s.status`,
      [...retentionParameters(retention), [...EXPIRING_STATUSES]],
    );
    return rows.map((row) => ({ endpointId: row.endpoint_id, status: row.status }));
  }

  /**
   * Deletes the group's oldest `limit` expired events after `after`, with their deliveries, AI results and
   * alerts (by their foreign keys' cascade), in one short transaction of two statements. An event replayed
   * within its retention is not expired: a replay's deliveries are dated when it is made (those of a
   * capture, with the capture), so an old dead letter being replayed, whose status moves on to `failed` or
   * `delivered` with the replay's first attempt, is not deleted under it. The first statement takes the
   * events `for update skip locked`: another worker's batch takes the next ones instead of waiting for
   * these, and a row being written (a status change, a replay reading it `for key share`) is left for the
   * next pass rather than waited on. The second deletes them (events' own statement, event-deletion.ts)
   * with a fresh look at their deliveries: a replay that committed after the first statement's snapshot
   * keeps its event, and one made from then on waits for this transaction, then finds its event gone
   * (404). Each batch starts after the last one's last
   * event, so no batch walks again over the index entries of the rows its predecessors deleted (they stay
   * in the index until a vacuum). The endpoint's retention is read by each batch: one lengthened (a plan
   * upgraded, `retention_days` raised or removed) during a pass stops the deletes at once, and a deleted
   * endpoint's group ends.
   */
  async deleteBatch(
    retention: PlanRetention,
    group: ExpiringGroup,
    after: GroupCursor | null,
    limit: number,
  ): Promise<DeletedBatch> {
    const start = after ?? GROUP_START;
    return this.em.getKnex().transaction(async (trx) => {
      const { rows: taken } = await trx.raw<{
        rows: { id: string; received_at: string; expired_before: string }[];
      }>(
        `with ${RETENTION_DAYS},
         expiry as (select now() - make_interval(days => days) as before from retention where id = ?)
         select id, received_at::text, (select before from expiry)::text as expired_before from events
         where endpoint_id = ? and status = ? and received_at < (select before from expiry)
           and (received_at, id) > (?::timestamptz, ?::uuid)
           and not exists (select 1 from deliveries dl
                           where dl.event_id = events.id and dl.created_at >= (select before from expiry))
         order by received_at, id
         limit ?
         for update skip locked`,
        [
          ...retentionParameters(retention),
          group.endpointId,
          group.endpointId,
          group.status,
          start.receivedAt,
          start.id,
          limit,
        ],
      );
      const last = taken.at(-1);
      if (last === undefined) return { taken: 0, deleted: 0, last: null };
      const deleted = await deleteEventsNotReplayedSince(
        trx,
        taken.map((event) => event.id),
        last.expired_before,
      );
      return {
        taken: taken.length,
        deleted,
        last: { receivedAt: last.received_at, id: last.id },
      };
    });
  }
}
