import { ConflictException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { afterCommit } from '../database/write-transaction';
import { DeliveryQueue } from './delivery-queue.service';
import { ReplayRepository } from './replay.repository';

export interface ReplayResult {
  ok: true;
  /** The dispatch id: new for every replay; each delivery's Bull job id is its delivery id. */
  jobId: string;
}

@Injectable()
export class ReplayService {
  private readonly logger = new Logger(ReplayService.name);

  constructor(
    private readonly deliveries: ReplayRepository,
    private readonly queue: DeliveryQueue,
  ) {}

  /**
   * A new dispatch of the event's original request to the endpoint's active destinations that would
   * receive it were it captured now (their filters; not when its signature failed and is enforced).
   */
  async replay(endpointId: string, eventId: string): Promise<ReplayResult> {
    const dispatchId = randomUUID();
    const replay = await this.deliveries.createReplay(endpointId, eventId, dispatchId);
    if (replay === null) throw new NotFoundException('event not found');
    const { deliveryIds, skipped } = replay;
    if (deliveryIds.length === 0 && skipped.length === 0) {
      throw new ConflictException('the endpoint has no active destination: add or activate one, then replay');
    }
    if (deliveryIds.length === 0) {
      throw new ConflictException(
        `no active destination would receive this event: ${skipped.map(({ url, reason }) => `${url}: ${reason}`).join('; ')}`,
      );
    }
    // Once the rows are committed (a job taken before would not find them): if Redis is down then, the
    // sweeper enqueues them when it is back.
    await afterCommit(async () => {
      this.queue
        .dispatch(deliveryIds)
        .catch((error: Error) =>
          this.logger.warn(`replay enqueue deferred to the sweeper: ${error.message}`),
        );
    });
    return { ok: true, jobId: dispatchId };
  }
}
