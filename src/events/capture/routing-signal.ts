import { EntityManager } from '@mikro-orm/postgresql';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import { isMainThread } from 'node:worker_threads';
import { Coalesced } from '../../common/coalesced';
import type { Environment } from '../../config/environment';
import { Metrics } from '../../metrics/metrics.service';
import { REDIS } from '../../redis/redis.module';

/** The most rows of `routing_queue` a scrape of /metrics counts (it has no index: each is read). */
const ROUTING_COUNT_LIMIT = 100_000;

/** The Redis channel on which captures tell the routers that events wait in `routing_queue`. */
export const routingChannel = (config: ConfigService<Environment, true>) =>
  `${config.get('REDIS_PREFIX', { infer: true })}:routing`;

/**
 * Tells the routers that a capture queued events, over Redis (one PUBLISH, not awaited by the capture). A
 * publish still going when the next capture batch commits is followed by one more, not by one a batch.
 * An announcement that fails or finds no router costs a delay, never an event: the routers also look
 * every second (DeliveryRouter).
 */
@Injectable()
export class RoutingSignal {
  private readonly channel: string;
  private readonly publishes = new Coalesced(
    () => this.publish(),
    () => undefined,
  );

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly em: EntityManager,
    metrics: Metrics,
    config: ConfigService<Environment, true>,
  ) {
    this.channel = routingChannel(config);
    // Every process reports it, as the delivery queue's figures: events pile up there while no worker
    // runs, which the queue's figures cannot show (no job is made). A delivery thread's figures are merged
    // into its process's, which reports it once.
    if (isMainThread)
      metrics.storedGauge(
        'hooktrail_routing_queue_events',
        `Captured events waiting for a worker's router to make their deliveries (counted up to ${ROUTING_COUNT_LIMIT}), read from PostgreSQL on scrape`,
        () => this.queued(),
      );
  }

  announce(): void {
    this.publishes.request();
  }

  private async publish(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.publish(this.channel, '');
  }

  private async queued(): Promise<number> {
    const { rows } = await this.em
      .getKnex()
      .raw('select count(*)::int as queued from (select from routing_queue limit ?) as queue', [
        ROUTING_COUNT_LIMIT,
      ]);
    return (rows[0] as { queued: number }).queued;
  }
}
