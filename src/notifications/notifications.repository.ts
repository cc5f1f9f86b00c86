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

const OUTBOX_COLUMNS = 'id, type, data, created_at, message_id';

interface OutboxRow {
  id: string;
  type: NotificationEventType;
  data: Record<string, unknown>;
  created_at: Date | string;
  message_id: string;
}

/** A message claimed for sending: its id, and its notifications, oldest first. */
export interface ClaimedMessage {
  messageId: string;
  notifications: PendingNotification[];
}

function toMessage(rows: OutboxRow[]): ClaimedMessage {
  const notifications = rows
    .map((row) => ({ id: row.id, type: row.type, data: row.data, createdAt: new Date(row.created_at) }))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || Number(a.id) - Number(b.id));
  return { messageId: rows[0].message_id, notifications };
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

  /**
   * Runs `work` in a transaction holding the channel's lock, so that two jobs never claim the same
   * notifications. `work` never waits on the network: the lock lasts some milliseconds.
   */
  withChannelLock<T>(channelId: string, work: (trx: Knex) => Promise<T>): Promise<T> {
    return this.knex.transaction(async (trx) => {
      await trx.raw(`select pg_advisory_xact_lock(hashtext('notification-channel:' || ?))`, [channelId]);
      return work(trx);
    });
  }

  /** The channel, or null once deleted. */
  async channelForSending(trx: Knex, channelId: string): Promise<NotificationChannel | null> {
    const { rows } = await trx.raw(`select ${CHANNEL_COLUMNS} from notification_channels where id = ?`, [
      channelId,
    ]);
    return rows[0] ? toChannel(rows[0]) : null;
  }

  /**
   * Claims for `jobId`, for `leaseMs`, a message begun before: one whose job died sending it (its claim ran
   * out), or the one held for `jobId`, its retry. Answers its id and notifications, or null.
   */
  async claimBegun(
    trx: Knex,
    channelId: string,
    jobId: string,
    leaseMs: number,
  ): Promise<ClaimedMessage | null> {
    const { rows } = await trx.raw(
      `update notification_outbox set claimed_by = ?, claimed_until = now() + make_interval(secs => ?)
       where message_id = (select message_id from notification_outbox
                           where channel_id = ? and message_id is not null
                             and (claimed_until <= now() or claimed_by = ?)
                           order by id limit 1)
       returning ${OUTBOX_COLUMNS}`,
      [jobId, leaseMs / 1000, channelId, jobId],
    );
    return rows.length > 0 ? toMessage(rows) : null;
  }

  /**
   * Claims for `jobId` a new message of the notifications due now, at most `limit`, oldest first: of each
   * kind whose window is over, those it gathered (written before its end), or else the first one alone
   * (the kind was quiet: it goes at once, and opens a window for those that follow it). Starts the window
   * of each kind the message holds (a webhook channel's `limit` is 1 and it has no windows). `messageIdOf`
   * names the message after what it holds.
   */
  async claimDue(
    trx: Knex,
    claim: {
      channelId: string;
      jobId: string;
      leaseMs: number;
      windowMs: number;
      limit: number;
      windowed: boolean;
      messageIdOf: (notificationIds: string[]) => string;
    },
  ): Promise<ClaimedMessage | null> {
    const { rows: due } = await trx.raw<{ rows: { id: string; type: NotificationEventType }[] }>(
      `select id, type from (
         select o.id, o.type, o.created_at,
                bool_or(o.created_at < w.last_message_at + make_interval(secs => ?)) over kind as gathered,
                row_number() over (kind order by o.created_at, o.id) as place
         from notification_outbox o
         left join notification_windows w on w.channel_id = o.channel_id and w.type = o.type
         where o.channel_id = ? and o.message_id is null
           and coalesce(w.last_message_at, '-infinity') <= now() - make_interval(secs => ?)
         window kind as (partition by o.type)) as due
       where gathered or place = 1
       order by created_at, id limit ?`,
      [claim.windowMs / 1000, claim.channelId, claim.windowMs / 1000, claim.limit],
    );
    if (due.length === 0) return null;
    const ids = due.map((row) => row.id);
    const { rows } = await trx.raw(
      `update notification_outbox set message_id = ?, claimed_by = ?,
         claimed_until = now() + make_interval(secs => ?)
       where id = any(?::bigint[]) returning ${OUTBOX_COLUMNS}`,
      [claim.messageIdOf(ids), claim.jobId, claim.leaseMs / 1000, ids],
    );
    if (claim.windowed)
      await trx.raw(
        `insert into notification_windows (channel_id, type, last_message_at)
         select ?, type, now() from unnest(?::text[]) as kinds(type)
         on conflict (channel_id, type) do update set last_message_at = excluded.last_message_at`,
        [claim.channelId, [...new Set(due.map((row) => row.type))]],
      );
    return toMessage(rows);
  }

  /** When the first window holding back one of the channel's notifications ends, if one does. */
  async nextWindowEnd(trx: Knex, channelId: string, windowMs: number): Promise<Date | null> {
    const { rows } = await trx.raw(
      `select min(w.last_message_at) + make_interval(secs => ?) as ends from notification_outbox o
       join notification_windows w on w.channel_id = o.channel_id and w.type = o.type
       where o.channel_id = ? and o.message_id is null`,
      [windowMs / 1000, channelId],
    );
    return toDate(rows[0]?.ends ?? null);
  }

  async discardPending(trx: Knex, channelId: string): Promise<void> {
    await trx.raw(`delete from notification_outbox where channel_id = ?`, [channelId]);
  }

  /** The message went out: its notifications leave the outbox, and the channel is healthy again. */
  async markSent(channelId: string, messageId: string): Promise<void> {
    await this.knex.raw(
      `with sent as (delete from notification_outbox where message_id = ?)
       update notification_channels set last_sent_at = now(), status = 'ok', last_error = null,
         failing_since = null, dropped_messages = 0
       where id = ? and status <> 'disabled'`,
      [messageId, channelId],
    );
  }

  /**
   * Counts a failed send of the message, which the dashboard shows the reason of meanwhile; answers how
   * many of its sends have failed.
   */
  async countFailure(channelId: string, messageId: string, error: string): Promise<number> {
    const { rows } = await this.knex.raw(
      `with failed as (update notification_outbox set attempts = attempts + 1 where message_id = ?
                       returning attempts),
            shown as (update notification_channels set last_error = ? where id = ?)
       select max(attempts) as attempts from failed`,
      [messageId, error.slice(0, ERROR_MAX_LENGTH), channelId],
    );
    return rows[0]?.attempts ?? 0;
  }

  /** Holds the message for the job that retries it, `retry.jobId`, for `retry.holdMs`. */
  async holdForRetry(messageId: string, retry: { jobId: string; holdMs: number }): Promise<void> {
    await this.knex.raw(
      `update notification_outbox set claimed_by = ?, claimed_until = now() + make_interval(secs => ?)
       where message_id = ?`,
      [retry.jobId, retry.holdMs / 1000, messageId],
    );
  }

  /**
   * The message failed its every attempt: its notifications are dropped, the channel is `failing`, and
   * `disabled` after `disableAfter` dropped messages in a row.
   */
  async markDropped(
    channelId: string,
    messageId: string,
    error: string,
    disableAfter: number,
  ): Promise<ChannelStatus> {
    const { rows } = await this.knex.raw(
      `with dropped as (delete from notification_outbox where message_id = ?)
       update notification_channels set last_error = ?,
         failing_since = coalesce(failing_since, now()), dropped_messages = dropped_messages + 1,
         status = case when dropped_messages + 1 >= ? then 'disabled' else 'failing' end
       where id = ? returning status`,
      [messageId, error.slice(0, ERROR_MAX_LENGTH), disableAfter, channelId],
    );
    return rows[0]?.status ?? 'disabled';
  }

  /** A test message failed: the dashboard shows why. */
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
   * their kind's window), or with a message whose claim ran out `graceSeconds` ago: their job may have been
   * lost with Redis, or died with its worker.
   */
  async channelsWithOverdueNotifications(graceSeconds: number, windowMs: number): Promise<string[]> {
    const { rows } = await this.knex.raw(
      `select distinct o.channel_id from notification_outbox o
       left join notification_windows w on w.channel_id = o.channel_id and w.type = o.type
       where case when o.message_id is null
                  then o.created_at < now() - make_interval(secs => ?)
                       and coalesce(w.last_message_at, '-infinity') < now() - make_interval(secs => ?)
                  else o.claimed_until < now() - make_interval(secs => ?) end`,
      [graceSeconds, graceSeconds + windowMs / 1000, graceSeconds],
    );
    return rows.map((row: { channel_id: string }) => row.channel_id);
  }
}
