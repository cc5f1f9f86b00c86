import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Queue } from 'bull';
import type { Environment } from '../config/environment';
import { DELIVERY_QUEUE, type DeliveryJob, deliveryJobOptions } from './delivery-jobs';

export interface QueuedDelivery {
  id: string;
  /** Attempts already made (a delivery re-enqueued by the sweeper continues its schedule). */
  priorAttempts?: number;
  /** Wait this long before the attempt (a held retry that is not yet due). */
  delayMs?: number;
}

/** Producer side of the delivery queue: one Bull job per delivery row, its job id the delivery id. */
@Injectable()
export class DeliveryQueue {
  private readonly retryDelaysMs: number[];

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob>,
    config: ConfigService<Environment, true>,
  ) {
    this.retryDelaysMs = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
  }

  /**
   * Adds the jobs in one round trip. Re-adding a delivery whose job is still in Redis is a no-op. Fails at
   * once while Redis is away, instead of piling the jobs up in the client's offline queue: the deliveries
   * are in PostgreSQL, and the sweeper enqueues them when Redis is back.
   */
  async enqueue(deliveries: QueuedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    if (this.queue.client.status !== 'ready') throw new Error(`Redis is ${this.queue.client.status}`);
    await this.queue.addBulk(
      deliveries.map((delivery) => ({
        data: { deliveryId: delivery.id },
        opts: deliveryJobOptions(
          delivery.id,
          this.retryDelaysMs,
          delivery.priorAttempts ?? 0,
          delivery.delayMs ?? 0,
        ),
      })),
    );
  }
}
