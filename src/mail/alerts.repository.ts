import { ENDPOINT_ACCOUNT_HOLDERS } from '../access/access-sql';
import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
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
  /** The mail's id (its Message-ID): kept when a worker that died with the mail claimed leaves it to another. */
  mailId: string;
  endpointId: string;
  endpointName: string;
  /** The endpoint's account holders: its owner, or every owner and admin of its team. */
  recipients: AlertRecipient[];
  /** The alerts the mail covers, oldest first: what it counts and marks sent. */
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
   * Runs `work` in a transaction holding the endpoint's alert lock, so that two workers never claim alerts
   * of one endpoint at once (rows taken `for update skip locked` would let a second worker claim the newer
   * alerts beside the first one's and send a second mail in the window). `work` never waits on the network:
   * the lock lasts some milliseconds.
   */
  withEndpointLock<T>(endpointId: string, work: (trx: Knex) => Promise<T>): Promise<T> {
    return this.em.getKnex().transaction(async (trx) => {
      await trx.raw(`select pg_advisory_xact_lock(hashtext('dead-letter-alerts:' || ?))`, [endpointId]);
      return work(trx);
    });
  }

  /** The end of the claim of a worker sending one of the endpoint's mails now, if one is. */
  async claimedUntil(trx: Knex, endpointId: string): Promise<Date | null> {
    const { rows } = await trx.raw(
      `select max(claimed_until) as until from dead_letter_alerts
       where endpoint_id = ? and sent_at is null and claimed_until > now()`,
      [endpointId],
    );
    const until: Date | string | null = rows[0]?.until ?? null;
    return until === null ? null : new Date(until);
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
   * Claims the endpoint's next mail for `leaseMs`: the one whose worker died sending it (its claim ran
   * out), again with the same alerts and id, else a new one of every unsent alert. Answers
   * all its alert ids, and the events of the `listed` oldest with their dead-lettered destinations (a
   * flood of thousands is counted, not written out in one mail). Only when no claim is running
   * (`claimedUntil`), under the endpoint's lock.
   */
  async claim(trx: Knex, endpointId: string, listed: number, leaseMs: number): Promise<AlertBatch | null> {
    const { rows: unsent } = await trx.raw<{
      rows: { id: string; mail_id: string | null; notified: boolean }[];
    }>(
      `select id, mail_id, notified_at is not null as notified from dead_letter_alerts
       where endpoint_id = ? and sent_at is null order by created_at, id`,
      [endpointId],
    );
    if (unsent.length === 0) return null;
    const begun = unsent.find((row) => row.mail_id !== null)?.mail_id;
    const mailId = begun ?? randomUUID();
    const ids = begun ? unsent.filter((row) => row.mail_id === begun) : unsent;
    const alertIds = ids.map((row) => row.id);
    await trx.raw(
      `update dead_letter_alerts set mail_id = ?, claimed_until = now() + make_interval(secs => ?)
       where id = any(?::uuid[])`,
      [mailId, leaseMs / 1000, alertIds],
    );
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
      mailId,
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

  /** The mail went out: its alerts are sent (one statement, after the mail, outside any transaction). */
  async markSent(mailId: string): Promise<void> {
    await this.em.getKnex().raw(
      `update dead_letter_alerts set sent_at = now(), claimed_until = null, notified_at = coalesce(notified_at, now())
       where mail_id = ? and sent_at is null`,
      [mailId],
    );
  }

  /**
   * SMTP refused the mail (or never answered): its alerts are unclaimed, and the next try (Bull's retry)
   * mails them with those that came since, as a new mail, and tells the channels of those at once.
   */
  async release(mailId: string): Promise<void> {
    await this.em
      .getKnex()
      .raw(
        `update dead_letter_alerts set mail_id = null, claimed_until = null where mail_id = ? and sent_at is null`,
        [mailId],
      );
  }

  async markNotified(trx: Knex, alertIds: string[]): Promise<void> {
    await trx.raw(`update dead_letter_alerts set notified_at = now() where id = any(?::uuid[])`, [alertIds]);
  }

  /**
   * Endpoints with alerts left unsent `graceSeconds` past the time they were due (now, or the end of
   * the endpoint's alert window) and no mail being sent: their job may have been lost with Redis, or the
   * worker that claimed their mail died (its claim ran out).
   */
  async endpointsWithOverdueAlerts(graceSeconds: number, windowMs: number): Promise<string[]> {
    const { rows } = await this.em.getKnex().raw(
      `select a.endpoint_id from dead_letter_alerts a
       where a.sent_at is null and a.created_at < now() - make_interval(secs => ?)
         and not exists (select 1 from dead_letter_alerts c
           where c.endpoint_id = a.endpoint_id and c.sent_at is null and c.claimed_until > now())
       group by a.endpoint_id
       having coalesce((select max(s.sent_at) from dead_letter_alerts s where s.endpoint_id = a.endpoint_id), '-infinity')
              < now() - make_interval(secs => ?)`,
      [graceSeconds, graceSeconds + windowMs / 1000],
    );
    return rows.map((row: { endpoint_id: string }) => row.endpoint_id);
  }
}
