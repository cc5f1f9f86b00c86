import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { ALERT_QUEUE, type AlertJob } from '../jobs/alert-jobs';

/** Producer of alert jobs. A job mails whatever the endpoint's outbox holds, so extra jobs are harmless. */
@Injectable()
export class AlertScheduler {
  constructor(@InjectQueue(ALERT_QUEUE) private readonly queue: Queue<AlertJob>) {}

  /** Mails the endpoint's unsent alerts now, or at `notBefore` (the end of its alert window). */
  async schedule(endpointId: string, notBefore?: Date): Promise<void> {
    await this.queue.add(
      { endpointId },
      {
        // One waiting job per endpoint and due time: scheduling the same window twice is a no-op.
        jobId: `alert:${endpointId}:${notBefore ? notBefore.getTime() : 'now'}`,
        delay: notBefore ? Math.max(0, notBefore.getTime() - Date.now()) : 0,
        attempts: 12,
        backoff: { type: 'exponential', delay: 5000 },
        removeOnComplete: true,
        removeOnFail: true, // the sweeper schedules it again while the outbox holds unsent alerts
      },
    );
  }
}
