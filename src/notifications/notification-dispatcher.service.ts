import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';
import type { Environment } from '../config/environment';
import type { Knex } from '../database/sql';
import { composeMessage, messageId } from './channel-messages';
import { ChannelSendError, ChannelSender } from './channel-sender.service';
import type { NotificationChannel } from './notification-channel';
import {
  DISABLE_AFTER_DROPPED_MESSAGES,
  NOTIFICATION_CLAIM_MS,
  RETRY_HOLD_MARGIN_MS,
} from '../jobs/notification-jobs';
import { NotificationScheduler } from './notification-scheduler.service';
import { type ClaimedMessage, NotificationsRepository } from './notifications.repository';

/**
 * One digest takes at most this many notifications; more wait for the next window. Far above what a
 * window gathers (dead letters come in batches per endpoint alert window, issues per destination and kind).
 */
const MESSAGE_NOTIFICATION_LIMIT = 1000;

/**
 * Sends a channel's outbox as design.md's "Notifications: timing" says: the first notification of each
 * kind at once, later ones of that kind within NOTIFICATION_WINDOW_S together at the window's end, and
 * every notification of a webhook channel at once as one signed message of its own. No network call
 * happens in a transaction: each message is claimed in a short one (under the channel's lock), sent
 * outside any, and marked sent after, so a slow channel holds neither a database connection nor the lock.
 * Its id (`hooktrail-id`, or the mail's Message-ID) names what it holds, so a message sent again after
 * its worker died is recognisable as the same. A failed message is held for a retry job of its own on the
 * delivery retry schedule (the dashboard shows the error meanwhile), while the channel's other messages
 * go on; after its last attempt the message is dropped instead and the channel marked `failing`, then
 * `disabled` after DISABLE_AFTER_DROPPED_MESSAGES dropped messages in a row: a dead channel is not
 * retried forever.
 */
@Injectable()
export class NotificationDispatcher {
  private readonly logger = new Logger(NotificationDispatcher.name);
  private readonly siteUrl: string;
  private readonly windowMs: number;
  private readonly retryDelaysMs: number[];

  constructor(
    private readonly outbox: NotificationsRepository,
    private readonly scheduler: NotificationScheduler,
    private readonly sender: ChannelSender,
    config: ConfigService<Environment, true>,
  ) {
    this.siteUrl = config.get('SITE_URL', { infer: true }) ?? '';
    this.windowMs = config.get('NOTIFICATION_WINDOW_S', { infer: true }) * 1000;
    this.retryDelaysMs = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
  }

  /** Sends every message of the channel that is due, one after the other, then schedules the next window's end. */
  async sendFor(channelId: string, jobId: string): Promise<void> {
    for (;;) {
      const next = await this.outbox.withChannelLock(channelId, (trx) => this.claim(trx, channelId, jobId));
      if (!next) return;
      if ('windowEnd' in next) {
        await this.scheduler.schedule(channelId, next.windowEnd);
        return;
      }
      await this.send(next.channel, next.message);
    }
  }

  private async claim(
    trx: Knex,
    channelId: string,
    jobId: string,
  ): Promise<{ channel: NotificationChannel; message: ClaimedMessage } | { windowEnd: Date } | null> {
    const channel = await this.outbox.channelForSending(trx, channelId);
    if (!channel) return null; // deleted, and its outbox with it
    if (channel.status === 'disabled') {
      await this.outbox.discardPending(trx, channelId);
      return null;
    }
    const windowed = channel.type !== 'webhook';
    const message =
      (await this.outbox.claimBegun(trx, channelId, jobId, NOTIFICATION_CLAIM_MS)) ??
      (await this.outbox.claimDue(trx, {
        channelId,
        jobId,
        leaseMs: NOTIFICATION_CLAIM_MS,
        windowMs: this.windowMs,
        limit: windowed ? MESSAGE_NOTIFICATION_LIMIT : 1,
        windowed,
        messageIdOf: (notificationIds) => messageId(channelId, notificationIds),
      }));
    if (message) return { channel, message };
    const windowEnd = await this.outbox.nextWindowEnd(trx, channelId, this.windowMs);
    return windowEnd ? { windowEnd } : null;
  }

  /**
   * Sends a claimed message outside any transaction, and marks it sent, holds it for a retry of its own
   * (the channel's other messages go on meanwhile), or drops it after its last attempt.
   */
  private async send(channel: NotificationChannel, message: ClaimedMessage): Promise<void> {
    const { messageId, notifications } = message;
    try {
      await this.sender.send(channel, composeMessage(notifications, this.siteUrl), messageId);
    } catch (error) {
      const failure =
        error instanceof ChannelSendError ? error : new ChannelSendError((error as Error).message);
      const failed = await this.outbox.countFailure(channel.id, messageId, failure.message);
      const retryDelayMs = this.retryDelaysMs[failed - 1];
      if (retryDelayMs !== undefined) {
        const jobId = `notification-retry:${messageId}:${failed}`;
        await this.outbox.holdForRetry(messageId, { jobId, holdMs: retryDelayMs + RETRY_HOLD_MARGIN_MS });
        await withRedisTimeout(
          this.scheduler.scheduleRetry(channel.id, jobId, retryDelayMs),
          BACKGROUND_REDIS_TIMEOUT_MS,
        ).catch((scheduling: Error) =>
          this.logger.warn({ messageId, error: scheduling.message }, 'retry not scheduled; the sweep will'),
        );
        this.logger.warn(
          { channelId: channel.id, messageId, attempt: failed, error: failure.message },
          'notification failed; will retry',
        );
        return;
      }
      const status = await this.outbox.markDropped(
        channel.id,
        messageId,
        failure.message,
        DISABLE_AFTER_DROPPED_MESSAGES,
      );
      this.logger.warn(
        {
          channelId: channel.id,
          messageId,
          notifications: notifications.length,
          status,
          error: failure.message,
        },
        'notification dropped after its last attempt',
      );
      return;
    }
    await this.outbox.markSent(channel.id, messageId);
    this.logger.log(
      { channelId: channel.id, type: channel.type, messageId, notifications: notifications.length },
      'notification sent',
    );
  }
}
