import { EntityManager } from '@mikro-orm/postgresql';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import { PeriodicTask } from '../common/periodic-task';
import { untilShort } from '../common/until-short';
import type { Environment } from '../config/environment';
import { REDIS } from '../redis/redis.module';
import { TAKE_FOR_ROUTING } from '../events/capture/routing-queue';
import { routingChannel } from '../events/capture/routing-signal';
import { queueForSearch } from '../events/search/search-queue';
import { DeliveryQueue } from './delivery-queue.service';

/** Events routed per statement: one insert of their deliveries and one commit for the lot. */
export const ROUTE_BATCH = 1000;
/**
 * How often a router looks at the queue without being told to: what routing waits at most when the
 * capture's announcement was lost (Redis away, no router subscribed yet).
 */
const ROUTE_INTERVAL_MS = 1000;

/**
 * Makes the deliveries of a batch of queued events. The queue's rows are taken (TAKE_FOR_ROUTING, the
 * capture's own SQL), their events read by primary key (a row whose event is gone routes nothing and is
 * dropped), and each gets a `pending` delivery per destination its capture chose that is still active (one
 * removed or switched off meanwhile gets nothing more, as after its change). A delivery is made as of its
 * event's capture (`created_at` is the event's `received_at`), so a FIFO destination's order is the order
 * of the captures, however late they were routed. An event left without deliveries is queued for the
 * search indexer (queueForSearch, the indexer's SQL). Returns how many rows were taken and the new
 * deliveries, in capture order.
 */
export const ROUTE_BATCH_SQL = `
  with taken as (${TAKE_FOR_ROUTING}
  ),
  routed as (
    select events.id, events.received_at, taken.destination_ids
    from events join taken on taken.event_id = events.id
    where events.id = any(array(select event_id from taken))
  ),
  queued as (
    insert into deliveries (id, event_id, destination_id, destination_url, dispatch_id, status,
                            next_attempt_at, created_at)
    select gen_random_uuid(), routed.id, destinations.id, destinations.url, routed.id, 'pending', now(),
           routed.received_at
    from routed
    cross join lateral unnest(routed.destination_ids) as target(id)
    join destinations on destinations.id = target.id and destinations.is_active
    returning id, event_id, created_at
  ),
  unrouted as (
    ${queueForSearch('select id from routed except select event_id from queued')}
  )
  select (select count(*)::int from taken) as taken,
         coalesce((select array_agg(id::text order by created_at, event_id) from queued), '{}') as delivery_ids`;

/**
 * The router of a worker (APP_ROLE `worker`, or the delivery thread of `all`): the capture path stores each
 * forwarded event with a row in `routing_queue`, and the router turns those rows into the event's
 * deliveries, in batches, and hands them to the delivery queue. It runs when a capture announces events
 * (RoutingSignal), and every ROUTE_INTERVAL_MS. The row and the deliveries change in one statement, so an
 * event is either still queued or has its deliveries, whatever stops when; deliveries whose dispatch to
 * Redis fails are the sweeper's, as any pending delivery without a job.
 */
@Injectable()
export class DeliveryRouter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryRouter.name);
  private readonly passes = new PeriodicTask(
    () => this.routeAll(),
    ROUTE_INTERVAL_MS,
    (error) => this.logger.warn(`routing skipped: ${error.message}`),
  );
  private readonly channel: string;
  private subscriber?: Redis;

  constructor(
    private readonly em: EntityManager,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly producer: DeliveryQueue,
    config: ConfigService<Environment, true>,
  ) {
    this.channel = routingChannel(config);
  }

  onApplicationBootstrap(): void {
    this.passes.start();
    this.subscriber = this.redis.duplicate({ maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', () => this.passes.wake());
    this.subscriber
      .subscribe(this.channel)
      .catch((error: Error) => this.logger.warn(`routing announcements not heard: ${error.message}`));
    this.passes.wake();
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscriber?.disconnect();
    await this.passes.stop();
  }

  /** Routes batch after batch until one takes fewer than ROUTE_BATCH rows. */
  private async routeAll(): Promise<void> {
    const knex = this.em.getKnex();
    await untilShort(ROUTE_BATCH, async () => {
      const { rows } = await knex.raw(ROUTE_BATCH_SQL, [ROUTE_BATCH]);
      const { taken, delivery_ids: deliveryIds } = rows[0] as { taken: number; delivery_ids: string[] };
      this.producer
        .dispatch(deliveryIds)
        .catch((error: Error) =>
          this.logger.warn(
            `${deliveryIds.length} deliveries left to the sweeper (enqueue failed: ${error.message})`,
          ),
        );
      return taken;
    });
  }
}
