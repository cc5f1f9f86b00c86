import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Queue } from 'bull';
import type { Environment } from '../config/environment';
import { NOTIFICATION_QUEUE, type NotificationJob, RETRY_SCHEDULE_BACKOFF } from './notification-jobs';

/** Producer of notification jobs. A job sends whatever the channel's outbox holds, so extra jobs are harmless. */
@Injectable()
export class NotificationScheduler {
  /** The first attempt and one retry per delay of DELIVERY_RETRY_DELAYS_MS, then the message is dropped. */
  private readonly attempts: number;

  constructor(
    @InjectQueue(NOTIFICATION_QUEUE) private readonly queue: Queue<NotificationJob>,
    config: ConfigService<Environment, true>,
  ) {
    this.attempts = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true }).length + 1;
  }

  /** Sends the channel's pending notifications now, or at `notBefore` (the end of its window). */
  async schedule(channelId: string, notBefore?: Date): Promise<void> {
    await this.queue.add(
      { channelId },
      {
        // One waiting job per channel and due time: scheduling the same window twice is a no-op.
        jobId: `notification:${channelId}:${notBefore ? notBefore.getTime() : 'now'}`,
        delay: notBefore ? Math.max(0, notBefore.getTime() - Date.now()) : 0,
        attempts: this.attempts,
        backoff: { type: RETRY_SCHEDULE_BACKOFF },
        removeOnComplete: true,
        removeOnFail: true, // a message that failed every attempt is dropped (NotificationDispatcher)
      },
    );
  }
}
