import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import { FIFO_PUMP_QUEUE, type FifoPumpJob } from '../jobs/fifo-pump-jobs';
import { processJobs } from '../jobs/queue-worker';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { FifoPumps } from './fifo-pumps.service';

/** FIFO destinations a worker serves at once (each one attempt at a time). */
const FIFO_PUMP_CONCURRENCY = 50;

/**
 * Runs the pumps of FIFO destinations (a worker: APP_ROLE `worker`, or the delivery thread of `all`). A
 * pump sends the destination's next delivery, then the one after, for as long as one is waiting. When the
 * next one must wait (its retry's delay, a rate slot), the pump's job ends and a delayed one takes over, so
 * a failing delivery blocks those after it without holding a job slot. With nothing left to send, the pump
 * stops unless it was woken meanwhile (FifoPumps). The job of a worker that died is taken over by Bull's
 * stalled-job check.
 */
@Injectable()
export class FifoPumpWorker implements OnApplicationBootstrap {
  private readonly logger = new Logger(FifoPumpWorker.name);

  constructor(
    @InjectQueue(FIFO_PUMP_QUEUE) private readonly queue: Queue<FifoPumpJob>,
    private readonly pumps: FifoPumps,
    private readonly attempts: DeliveryAttemptService,
  ) {}

  onApplicationBootstrap(): void {
    processJobs(
      this.queue,
      {
        concurrency: FIFO_PUMP_CONCURRENCY,
        logger: this.logger,
        failed: 'FIFO pump interrupted',
        fieldsOf: (job) => ({ destinationId: job.data.destinationId }),
      },
      ({ destinationId }) => this.pump(destinationId),
    );
  }

  async pump(destinationId: string): Promise<void> {
    for (;;) {
      const seen = await this.pumps.look(destinationId);
      const step = await this.attempts.attemptNext(destinationId);
      if (step.then === 'wait') return this.pumps.resumeAfter(destinationId, step.delayMs);
      if (step.then === 'sleep' && (await this.pumps.sleep(destinationId, seen))) return;
    }
  }
}
