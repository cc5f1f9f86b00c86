import { ApiProperty } from '@nestjs/swagger';
import {
  DELIVERY_ORDERINGS,
  type DeliveryOrdering,
  RATE_LIMIT_PERIODS,
  type RateLimitPeriod,
} from '../../model/destination.entity';

export class DestinationBacklogDto {
  /** Deliveries waiting for it: not yet attempted, or failed and owed a retry. @example 0 */
  pending!: number;
  /** When the oldest of them was dispatched (ISO 8601 UTC); null when none waits. */
  oldest_pending_at!: string | null;
}

export class DestinationDto {
  /** @example 5f0c6f0e-1f7a-4c1b-9a55-0c5d3f6f2b11 */
  id!: string;
  endpoint_id!: string;
  /** The HTTPS URL events are forwarded to. @example https://api.example.com/webhooks/stripe */
  url!: string;
  /**
   * Signing secret of the hooktrail-signature header; null when not set. Shown only to callers who may
   * change the destination (its owner; an owner, admin or member of its team; not through a read-only
   * API key): a viewer or a read-only API key gets null, and `secret_set` says whether one is set.
   */
  secret!: string | null;
  /** Whether the destination has a signing secret, for every caller (whether `secret` is shown or not). */
  secret_set!: boolean;
  /** Whether new events are forwarded to it. */
  is_active!: boolean;
  /** At most this many attempts per `rate_limit_period`, across all workers; null: no limit. */
  rate_limit!: number | null;
  /** `second` or `minute`. */
  @ApiProperty({ enum: RATE_LIMIT_PERIODS })
  rate_limit_period!: RateLimitPeriod;
  /** At most this many attempts at once, across all workers; null: a fair share of each worker. */
  max_in_flight!: number | null;
  /** Whether its deliveries are held (no attempt is made) until it is resumed. */
  paused!: boolean;
  /**
   * Why it is paused when it paused itself (`auto_pause_after` consecutive failed attempts); null when it
   * is not paused, or was paused by hand. @example auto-paused after 5 consecutive failed attempts
   */
  paused_reason!: string | null;
  /** It pauses itself after this many consecutive failed attempts; null: never. @example 5 */
  @ApiProperty({ type: 'integer', nullable: true, minimum: 1, maximum: 10000 })
  auto_pause_after!: number | null;
  /** `fifo`: one attempt at a time, in capture order; `none`: no order. */
  @ApiProperty({ enum: DELIVERY_ORDERINGS })
  ordering!: DeliveryOrdering;
  /** Which events it gets (README, "Destination filters"); null: every event. */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  filter!: Record<string, unknown> | null;
  /** ISO 8601 UTC. @example 2026-11-23T10:00:00.000Z */
  created_at!: string;
  /** Read only: the deliveries waiting for this destination. */
  backlog!: DestinationBacklogDto;
}

export class DestinationResponseDto {
  destination!: DestinationDto;
}

export class DestinationListResponseDto {
  /** Oldest first (the order they were added). */
  destinations!: DestinationDto[];
}
