import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { composeMessage, messageId } from './channel-messages';
import { ChannelSendError, ChannelSender } from './channel-sender.service';
import { DISABLE_AFTER_DROPPED_MESSAGES, NOTIFICATION_WINDOW_MS } from './notification-jobs';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';

/**
 * One message takes at most this many notifications; more wait for the next window. Far above what a
 * window gathers (dead letters come in batches per endpoint alert window, issues per destination and kind).
 */
const MESSAGE_NOTIFICATION_LIMIT = 1000;

/**
 * Sends a channel's outbox: its single notification, or one digest of all of them, never more than one
 * message per channel per NOTIFICATION_WINDOW_MS (within the window the job is postponed to its end).
 * A failed send throws so that Bull retries it (the dashboard shows the error meanwhile); on the last
 * attempt the message is dropped instead and the channel marked `failing`, then `disabled` after
 * DISABLE_AFTER_DROPPED_MESSAGES dropped messages in a row: a dead channel is not retried forever.
 */
@Injectable()
export class NotificationDispatcher {
  private readonly logger = new Logger(NotificationDispatcher.name);
  private readonly siteUrl: string;

  constructor(
    private readonly outbox: NotificationsRepository,
    private readonly scheduler: NotificationScheduler,
    private readonly sender: ChannelSender,
    config: ConfigService<Environment, true>,
  ) {
    this.siteUrl = config.get('SITE_URL', { infer: true }) ?? '';
  }

  /** `lastAttempt`: Bull will not retry this job, so a failure drops the message. */
  async sendFor(channelId: string, lastAttempt: boolean): Promise<void> {
    let dueAt: Date | null = null;
    try {
      dueAt = await this.outbox.withChannelLock(channelId, async (trx) => {
        const found = await this.outbox.forSending(trx, channelId);
        if (!found) return null; // deleted, and its outbox with it
        const { channel, lastMessageAt } = found;
        if (channel.status === 'disabled') {
          await this.outbox.discardPending(trx, channelId);
          return null;
        }
        const windowEnd = lastMessageAt ? new Date(lastMessageAt.getTime() + NOTIFICATION_WINDOW_MS) : null;
        if (windowEnd && windowEnd.getTime() > Date.now()) return windowEnd;
        const pending = await this.outbox.pending(trx, channelId, MESSAGE_NOTIFICATION_LIMIT);
        if (pending.length === 0) return null;
        const ids = pending.map((notification) => notification.id);
        try {
          await this.sender.send(channel, composeMessage(pending, this.siteUrl), messageId(channelId, ids));
        } catch (error) {
          const failure =
            error instanceof ChannelSendError ? error : new ChannelSendError((error as Error).message);
          if (!lastAttempt) throw failure;
          const status = await this.outbox.markDropped(
            trx,
            channelId,
            ids,
            failure.message,
            DISABLE_AFTER_DROPPED_MESSAGES,
          );
          this.logger.warn(
            { channelId, notifications: ids.length, status, error: failure.message },
            'notification dropped after its last attempt',
          );
          return null;
        }
        await this.outbox.markSent(trx, channelId, ids);
        this.logger.log({ channelId, type: channel.type, notifications: ids.length }, 'notification sent');
        return pending.length === MESSAGE_NOTIFICATION_LIMIT
          ? new Date(Date.now() + NOTIFICATION_WINDOW_MS)
          : null;
      });
    } catch (error) {
      if (error instanceof ChannelSendError) await this.outbox.recordError(channelId, error.message);
      throw error;
    }
    if (dueAt) await this.scheduler.schedule(channelId, dueAt);
  }
}
