import { EntityManager } from '@mikro-orm/postgresql';
import { Injectable } from '@nestjs/common';
import { ENDPOINT_ACCOUNT_HOLDERS } from '../access/access-sql';
import { withoutUrlPassword } from '../common/url-password';
import type { Knex } from '../database/sql';
import type {
  ChannelStatus,
  ChannelType,
  NotificationChannel,
  PendingNotification,
} from './notification-channel';
import type { NotificationEvent, NotificationEventType } from './notification-events';
import { sqlOf } from '../database/write-transaction';

/**
 * JSON.stringify's replacer for a notification's data: a destination URL's password stays out of what is
 * posted to chats, mailed or sent to webhooks (`https://user:[redacted]@host/...`).
 */
const hidingUrlPasswords = (_key: string, value: unknown) =>
  typeof value === 'string' ? withoutUrlPassword(value) : value;

const CHANNEL_COLUMNS = `id, user_id, type, target, events, sealed_secret, status, last_error, last_sent_at,
  failing_since, dropped_messages, created_at`;

interface ChannelRow {
  id: string;
  user_id: string;
  type: ChannelType;
  target: string;
  events: NotificationEventType[];
  sealed_secret: string | null;
  status: ChannelStatus;
  last_error: string | null;
  last_sent_at: Date | string | null;
  failing_since: Date | string | null;
  dropped_messages: number;
  created_at: Date | string;
}

/** Timestamps come back from the raw driver as strings. */
const toDate = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));

function toChannel(row: ChannelRow): NotificationChannel {
  return {
    id: row.id,
    userId: row.user_id,
    type: row.type,
    target: row.target,
    events: row.events,
    sealedSecret: row.sealed_secret,
    status: row.status,
    lastError: row.last_error,
    lastSentAt: toDate(row.last_sent_at),
    failingSince: toDate(row.failing_since),
    droppedMessages: row.dropped_messages,
    createdAt: new Date(row.created_at),
  };
}

/** Keeps an error readable in the dashboard and bounded in the row. */
const ERROR_MAX_LENGTH = 500;

/** Every query of notification channels and their outbox, each scoped by the channel's owner where a user asks. */
@Injectable()
export class NotificationsRepository {
  constructor(private readonly em: EntityManager) {}

  private get knex(): Knex {
    return sqlOf(this.em);
  }

  async create(input: {
    userId: string;
    type: ChannelType;
    target: string;
    events: NotificationEventType[];
    sealedSecret: string | null;
  }): Promise<NotificationChannel> {
    const { rows } = await this.knex.raw(
      `insert into notification_channels (user_id, type, target, events, sealed_secret)
       values (?, ?, ?, ?::text[], ?) returning ${CHANNEL_COLUMNS}`,
      [input.userId, input.type, input.target, input.events, input.sealedSecret],
    );
    return toChannel(rows[0]);
  }

  async countOwned(userId: string): Promise<number> {
    const { rows } = await this.knex.raw(
      `select count(*)::int as count from notification_channels where user_id = ?`,
      [userId],
    );
    return rows[0].count;
  }

  async listOwned(userId: string): Promise<NotificationChannel[]> {
    const { rows } = await this.knex.raw(
      `select ${CHANNEL_COLUMNS} from notification_channels where user_id = ? order by created_at, id`,
      [userId],
    );
    return rows.map(toChannel);
  }

  async findOwned(userId: string, id: string): Promise<NotificationChannel | null> {
    const { rows } = await this.knex.raw(
      `select ${CHANNEL_COLUMNS} from notification_channels where user_id = ? and id = ?`,
      [userId, id],
    );
    return rows[0] ? toChannel(rows[0]) : null;
  }

  async deleteOwned(userId: string, id: string): Promise<boolean> {
    const { rowCount } = await this.knex.raw(
      `delete from notification_channels where user_id = ? and id = ?`,
      [userId, id],
    );
    return rowCount > 0;
  }

  /**
   * Writes `event` into the outbox of every channel that subscribed to its type and is not disabled, of
   * every account holder of its endpoint, in one statement (inside `trx` when given); answers the channels
   * written to.
   */
  async enqueue(event: NotificationEvent, trx: Knex = this.knex): Promise<string[]> {
    const { rows } = await trx.raw(
      `insert into notification_outbox (channel_id, type, data)
       select c.id, ?, ?::jsonb from notification_channels c
       where c.user_id in (select holder.user_id from endpoints ep
                           cross join lateral (${ENDPOINT_ACCOUNT_HOLDERS}) as holder
                           where ep.id = ?)
         and ? = any(c.events) and c.status <> 'disabled'
       returning channel_id`,
      [event.type, JSON.stringify(event.data, hidingUrlPasswords), event.endpointId, event.type],
    );
    return rows.map((row: { channel_id: string }) => row.channel_id);
  }

  /** Runs `work` holding the channel's lock, so that two workers never send the same notifications. */
  withChannelLock<T>(channelId: string, work: (trx: Knex) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      await trx.raw(`select pg_advisory_xact_lock(hashtext('notification-channel:' || ?))`, [channelId]);
      return work(trx);
    });
  }

  /** The channel and when its last message (sent or dropped) left the outbox, or null once deleted. */
  async forSending(
    trx: Knex,
    channelId: string,
  ): Promise<{ channel: NotificationChannel; lastMessageAt: Date | null } | null> {
    const { rows } = await trx.raw(
      `select ${CHANNEL_COLUMNS}, last_message_at from notification_channels where id = ?`,
      [channelId],
    );
    if (!rows[0]) return null;
    return { channel: toChannel(rows[0]), lastMessageAt: toDate(rows[0].last_message_at) };
  }

  /** The oldest `limit` notifications waiting for the channel. */
  async pending(trx: Knex, channelId: string, limit: number): Promise<PendingNotification[]> {
    const { rows } = await trx.raw(
      `select id, type, data, created_at from notification_outbox
       where channel_id = ? order by created_at, id limit ?`,
      [channelId, limit],
    );
    return rows.map(
      (row: {
        id: string;
        type: NotificationEventType;
        data: Record<string, unknown>;
        created_at: Date;
      }) => ({
        id: row.id,
        type: row.type,
        data: row.data,
        createdAt: new Date(row.created_at),
      }),
    );
  }

  async discardPending(trx: Knex, channelId: string): Promise<void> {
    await trx.raw(`delete from notification_outbox where channel_id = ?`, [channelId]);
  }

  /** The notifications went out as one message: the channel is healthy again. */
  async markSent(trx: Knex, channelId: string, notificationIds: string[]): Promise<void> {
    await trx.raw(`delete from notification_outbox where id = any(?::bigint[])`, [notificationIds]);
    await trx.raw(
      `update notification_channels set last_message_at = now(), last_sent_at = now(), status = 'ok',
         last_error = null, failing_since = null, dropped_messages = 0
       where id = ?`,
      [channelId],
    );
  }

  /**
   * The message failed its every attempt: its notifications are dropped, the channel is `failing`, and
   * `disabled` after `disableAfter` dropped messages in a row.
   */
  async markDropped(
    trx: Knex,
    channelId: string,
    notificationIds: string[],
    error: string,
    disableAfter: number,
  ): Promise<ChannelStatus> {
    await trx.raw(`delete from notification_outbox where id = any(?::bigint[])`, [notificationIds]);
    const { rows } = await trx.raw(
      `update notification_channels set last_message_at = now(), last_error = ?,
         failing_since = coalesce(failing_since, now()), dropped_messages = dropped_messages + 1,
         status = case when dropped_messages + 1 >= ? then 'disabled' else 'failing' end
       where id = ? returning status`,
      [error.slice(0, ERROR_MAX_LENGTH), disableAfter, channelId],
    );
    return rows[0]?.status ?? 'disabled';
  }

  /** An attempt failed (Bull retries it): the dashboard shows why meanwhile. */
  async recordError(channelId: string, error: string): Promise<void> {
    await this.knex.raw(`update notification_channels set last_error = ? where id = ?`, [
      error.slice(0, ERROR_MAX_LENGTH),
      channelId,
    ]);
  }

  /** A test message reached the channel: it is healthy (and enabled) again. */
  async recordTestSent(channelId: string): Promise<void> {
    await this.knex.raw(
      `update notification_channels set last_sent_at = now(), status = 'ok', last_error = null,
         failing_since = null, dropped_messages = 0
       where id = ?`,
      [channelId],
    );
  }

  /**
   * Channels with notifications left waiting `graceSeconds` past the time they were due (now, or the end of
   * the channel's window): their job may have been lost with Redis.
   */
  async channelsWithOverdueNotifications(graceSeconds: number, windowMs: number): Promise<string[]> {
    const { rows } = await this.knex.raw(
      `select c.id from notification_channels c
       where exists (select 1 from notification_outbox o
                     where o.channel_id = c.id and o.created_at < now() - make_interval(secs => ?))
         and coalesce(c.last_message_at, '-infinity') < now() - make_interval(secs => ?)`,
      [graceSeconds, graceSeconds + windowMs / 1000],
    );
    return rows.map((row: { id: string }) => row.id);
  }
}
