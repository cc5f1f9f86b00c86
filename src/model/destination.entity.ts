import { OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { randomUUID } from 'node:crypto';
import { Endpoint } from './endpoint.entity';
import type { FilterRule } from '../ingest/filter';

export const RATE_LIMIT_PERIODS = ['second', 'minute'] as const;
export type RateLimitPeriod = (typeof RATE_LIMIT_PERIODS)[number];
export const DELIVERY_ORDERINGS = ['none', 'fifo'] as const;
export type DeliveryOrdering = (typeof DELIVERY_ORDERINGS)[number];

/** Flow control of a destination's deliveries (README, "Flow control"); the limits hold across workers. */
export interface FlowControl {
  /** At most this many attempts per `rateLimitPeriod`; null: no rate limit. */
  rateLimit: number | null;
  rateLimitPeriod: RateLimitPeriod;
  /** At most this many attempts at once; null: the fair share every destination gets. */
  maxInFlight: number | null;
  /** Held: no attempt is made and no retry is used up until it is resumed. */
  paused: boolean;
  /** `fifo`: one attempt at a time, in the order the deliveries were made; a failing one blocks the rest. */
  ordering: DeliveryOrdering;
}

@Entity({ tableName: 'destinations' })
@Index({ properties: ['endpoint', 'createdAt'] })
export class Destination implements FlowControl {
  [OptionalProps]?:
    | 'secret'
    | 'isActive'
    | 'createdAt'
    | 'rateLimit'
    | 'rateLimitPeriod'
    | 'maxInFlight'
    | 'paused'
    | 'ordering'
    | 'filter'
    | 'autoPauseAfter'
    | 'pausedReason'
    | 'consecutiveFailures'
    | 'lastSuccessAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Endpoint, { deleteRule: 'cascade' })
  endpoint!: Endpoint;

  @Property({ type: 'text' })
  url!: string;

  /** The signing secret, sealed (SecretBox): never the secret itself. */
  @Property({ type: 'text', nullable: true, fieldName: 'secret' })
  sealedSecret: string | null = null;

  @Property({ type: 'boolean', default: true })
  isActive = true;

  @Property({ type: 'integer', nullable: true })
  rateLimit: number | null = null;

  @Enum({ items: () => RATE_LIMIT_PERIODS, type: 'text', default: 'second' })
  rateLimitPeriod: RateLimitPeriod = 'second';

  @Property({ type: 'integer', nullable: true })
  maxInFlight: number | null = null;

  @Property({ type: 'boolean', default: false })
  paused = false;

  @Enum({ items: () => DELIVERY_ORDERINGS, type: 'text', default: 'none' })
  ordering: DeliveryOrdering = 'none';

  /** Paused by itself after this many consecutive failed attempts (README, "Auto-pause"); null: never. */
  @Property({ type: 'integer', nullable: true })
  autoPauseAfter: number | null = null;

  /** Why it was paused by itself; null when it is not paused, or was paused by hand. */
  @Property({ type: 'text', nullable: true })
  pausedReason: string | null = null;

  /** Failed attempts since its last success (or resume), counted as attempts are recorded. */
  @Property({ type: 'integer', default: 0 })
  consecutiveFailures = 0;

  /** When its latest recorded success was sent (to the second): failures sent before it are stale. */
  @Property({ type: 'timestamptz', nullable: true })
  lastSuccessAt: Date | null = null;

  /** Which events it gets (README, "Destination filters"); null: every event. */
  @Property({ type: 'jsonb', nullable: true })
  filter: FilterRule | null = null;

  @Property({ type: 'timestamptz', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
