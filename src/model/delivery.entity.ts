import { OptionalProps, Entity, Enum, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Destination } from './destination.entity';
import { WebhookEvent } from './event.entity';

export const DELIVERY_STATUSES = ['pending', 'failed', 'delivered', 'dead_letter'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryAttempt {
  at: string;
  response_code: number | null;
  duration_ms: number;
  error: string | null;
  response_body: string | null;
}

/**
 * One forwarding of an event to one destination for one dispatch (the capture, or a replay).
 * A row in `pending` or `failed` is also the outbox entry of its queue job: the sweeper re-enqueues
 * any whose job did not reach Redis.
 */
@Entity({ tableName: 'deliveries' })
export class Delivery {
  [OptionalProps]?:
    | 'status'
    | 'attemptCount'
    | 'responseCode'
    | 'responseBody'
    | 'attempts'
    | 'lastAttemptedAt'
    | 'nextAttemptAt'
    | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => WebhookEvent, { deleteRule: 'cascade', index: false })
  event!: WebhookEvent;

  @ManyToOne(() => Destination, { deleteRule: 'set null', nullable: true })
  destination!: Destination | null;

  @Property({ type: 'text' })
  destinationUrl!: string;

  @Property({ type: 'uuid' })
  dispatchId!: string;

  @Enum({ items: () => DELIVERY_STATUSES, type: 'text', default: 'pending' })
  status: DeliveryStatus = 'pending';

  @Property({ type: 'integer', default: 0 })
  attemptCount = 0;

  @Property({ type: 'integer', nullable: true })
  responseCode: number | null = null;

  @Property({ type: 'text', nullable: true })
  responseBody: string | null = null;

  @Property({ type: 'jsonb', default: '[]' })
  attempts: DeliveryAttempt[] = [];

  @Property({ type: 'timestamptz', nullable: true })
  lastAttemptedAt: Date | null = null;

  /** When the next attempt is due (null once delivered or dead-lettered); read by the sweeper. */
  @Property({ type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null = null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
