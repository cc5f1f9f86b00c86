import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { NOTIFICATION_QUEUE, type NotificationJob } from '../jobs/notification-jobs';

/**
 * Producer of notification jobs. A job sends whatever the channel's outbox holds that is due, so extra
 * jobs are harmless; a failed message is retried by a job of its own (NotificationDispatcher), so a job
 * is not retried by Bull: one that fails (PostgreSQL away) leaves its notifications to the worker's sweep.
 */
@Injectable()
export class NotificationScheduler {
  constructor(@InjectQueue(NOTIFICATION_QUEUE) private readonly queue: Queue<NotificationJob>) {}

  /**
   * Sends the channel's due notifications now, or at `notBefore` (the end of a window). Each call for now
   * is a job of its own: one that shared the id of a job already running would be dropped, and what it was
   * for (a notification written after that job looked) would wait for the next window's end.
   */
  async schedule(channelId: string, notBefore?: Date): Promise<void> {
    if (!notBefore) {
      await this.add(channelId, undefined, 0);
      return;
    }
    // One job per channel and window's end: scheduling the same end twice is a no-op.
    await this.add(
      channelId,
      `notification:${channelId}:${notBefore.getTime()}`,
      notBefore.getTime() - Date.now(),
    );
  }

  /** Schedules `jobId`, the retry of a failed message held for it, in `delayMs`. */
  async scheduleRetry(channelId: string, jobId: string, delayMs: number): Promise<void> {
    await this.add(channelId, jobId, delayMs);
  }

  private async add(channelId: string, jobId: string | undefined, delayMs: number): Promise<void> {
    await this.queue.add(
      { channelId },
      { jobId, delay: Math.max(0, delayMs), removeOnComplete: true, removeOnFail: true },
    );
  }
}
