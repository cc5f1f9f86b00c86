import { Injectable, Logger } from '@nestjs/common';
import { BACKGROUND_REDIS_TIMEOUT_MS, withRedisTimeout } from '../common/redis-timeout';
import type { Knex } from '../database/sql';
import type { NotificationEvent } from './notification-events';
import { NotificationScheduler } from './notification-scheduler.service';
import { NotificationsRepository } from './notifications.repository';

/**
 * Tells a user's notification channels about an event: writes it into the outbox of each channel that
 * subscribed to its type (one insert) and schedules the channel's job, which sends it at once or, within
 * NOTIFICATION_WINDOW_S of the channel's last message of that kind, in one digest at the window's end
 * (a webhook channel gets every notification at once, each in a message of its own).
 */
@Injectable()
export class Notifier {
  private readonly logger = new Logger(Notifier.name);

  constructor(
    private readonly outbox: NotificationsRepository,
    private readonly scheduler: NotificationScheduler,
  ) {}

  async notify(event: NotificationEvent): Promise<void> {
    await this.dispatch(await this.outbox.enqueue(event));
  }

  /**
   * Writes `event` into the outboxes inside a caller's transaction; once it has committed, the caller
   * passes the answer to `dispatch`. The sweep sends it anyway should the caller never get that far.
   */
  record(trx: Knex, event: NotificationEvent): Promise<string[]> {
    return this.outbox.enqueue(event, trx);
  }

  /**
   * Schedules the channels' jobs. Redis being away loses nothing: the notifications wait in PostgreSQL and
   * the worker's sweep schedules them again.
   */
  async dispatch(channelIds: string[]): Promise<void> {
    for (const channelId of new Set(channelIds)) {
      await withRedisTimeout(this.scheduler.schedule(channelId), BACKGROUND_REDIS_TIMEOUT_MS).catch(
        (error: Error) =>
          this.logger.warn({ channelId, error: error.message }, 'notification not scheduled; the sweep will'),
      );
    }
  }
}
