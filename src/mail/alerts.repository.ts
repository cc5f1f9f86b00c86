import { ENDPOINT_ACCOUNT_HOLDERS } from '../access/access-sql';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import type { Knex } from '../database/sql';

export interface AlertDestination {
  url: string;
  responseCode: number | null;
  error: string | null;
}

export interface AlertedEvent {
  alertId: string;
  eventId: string;
  method: string;
  receivedAt: Date;
  destinations: AlertDestination[];
}

/** Someone the dead-letter email goes to. */
export interface AlertRecipient {
  email: string;
  name: string;
}

export interface AlertBatch {
  endpointId: string;
  endpointName: string;
  /** The endpoint's account holders: its owner, or every owner of its team. */
  recipients: AlertRecipient[];
  /** Every unsent alert of the endpoint, oldest first: what the mail counts and marks sent. */
  alertIds: string[];
  /** Those of them not told to the notification channels yet (a mail that failed told them already). */
  unnotifiedIds: string[];
  /** The events of the oldest of them, at most the `listed` asked for, with their destinations. */
  events: AlertedEvent[];
}

/** Every query of the dead-letter alert outbox. */
@Injectable()
export class AlertsRepository {
  constructor(private readonly em: EntityManager) {}

  /**
   * Runs `work` holding the endpoint's alert lock, so that two workers never mail the same alerts.
   * The outbox rows are marked sent in the same transaction, after `work` (the sending) succeeded.
   */
  withEndpointLock<T>(endpointId: string, work: (trx: Knex) => Promise<T>): Promise<T> {
    return this.em.getKnex().transaction(async (trx) => {
      await trx.raw(`select pg_advisory_xact_lock(hashtext('dead-letter-alerts:' || ?))`, [endpointId]);
      return work(trx);
    });
  }

  async lastSentAt(trx: Knex, endpointId: string): Promise<Date | null> {
    const { rows } = await trx.raw(
      `select max(sent_at) as last from dead_letter_alerts where endpoint_id = ? and sent_at is not null`,
      [endpointId],
    );
    // The raw driver answers timestamps as strings.
    const last: Date | string | null = rows[0]?.last ?? null;
    return last === null ? null : new Date(last);
  }

  /**
   * The endpoint's unsent alerts: all their ids, and the events of the `listed` oldest with their
   * dead-lettered destinations (a flood of thousands is counted, not written out in one mail).
   */
  async unsent(trx: Knex, endpointId: string, listed: number): Promise<AlertBatch | null> {
    const { rows: ids } = await trx.raw<{ rows: { id: string; notified: boolean }[] }>(
      `select id, notified_at is not null as notified from dead_letter_alerts
       where endpoint_id = ? and sent_at is null order by created_at, id`,
      [endpointId],
    );
    if (ids.length === 0) return null;
    const alertIds = ids.map((row) => row.id);
    const { rows } = await trx.raw(
      `select a.id as alert_id, e.id as event_id, e.method, e.received_at, ep.name as endpoint_name,
              coalesce((select json_agg(json_build_object('url', d.destination_url, 'responseCode', d.response_code,
                         'error', d.attempts -> -1 ->> 'error') order by d.created_at)
                        from deliveries d where d.event_id = e.id and d.status = 'dead_letter'), '[]') as destinations
       from dead_letter_alerts a
       join events e on e.id = a.event_id
       join endpoints ep on ep.id = a.endpoint_id
       where a.id = any(?::uuid[])
       order by a.created_at, a.id`,
      [alertIds.slice(0, listed)],
    );
    if (rows.length === 0) return null;
    const recipients = await trx.raw(
      `select u.email, u.name from endpoints ep
       join users u on u.id in (${ENDPOINT_ACCOUNT_HOLDERS})
       where ep.id = ? order by u.email`,
      [endpointId],
    );
    return {
      endpointId,
      endpointName: rows[0].endpoint_name,
      recipients: recipients.rows,
      alertIds,
      unnotifiedIds: ids.filter((row) => !row.notified).map((row) => row.id),
      events: rows.map((row: Record<string, never>) => ({
        alertId: row.alert_id,
        eventId: row.event_id,
        method: row.method,
        receivedAt: new Date(row.received_at),
        destinations: row.destinations,
      })),
    };
  }

  async markSent(trx: Knex, alertIds: string[]): Promise<void> {
    await trx.raw(
      `update dead_letter_alerts set sent_at = now(), notified_at = coalesce(notified_at, now())
       where id = any(?::uuid[])`,
      [alertIds],
    );
  }

  async markNotified(trx: Knex, alertIds: string[]): Promise<void> {
    await trx.raw(`update dead_letter_alerts set notified_at = now() where id = any(?::uuid[])`, [alertIds]);
  }

  /**
   * Endpoints with alerts left unsent `graceSeconds` past the time they were due (now, or the end of
   * the endpoint's alert window): their job may have been lost with Redis.
   */
  async endpointsWithOverdueAlerts(graceSeconds: number, windowMs: number): Promise<string[]> {
    const { rows } = await this.em.getKnex().raw(
      `select a.endpoint_id from dead_letter_alerts a
       where a.sent_at is null and a.created_at < now() - make_interval(secs => ?)
       group by a.endpoint_id
       having coalesce((select max(s.sent_at) from dead_letter_alerts s where s.endpoint_id = a.endpoint_id), '-infinity')
              < now() - make_interval(secs => ?)`,
      [graceSeconds, graceSeconds + windowMs / 1000],
    );
    return rows.map((row: { endpoint_id: string }) => row.endpoint_id);
  }
}
