import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, Max, Min, ValidateIf } from 'class-validator';
import {
  DELIVERY_ORDERINGS,
  type DeliveryOrdering,
  RATE_LIMIT_PERIODS,
  type RateLimitPeriod,
} from '../../model/destination.entity';

export const RATE_LIMIT_MAX = 100_000;
export const MAX_IN_FLIGHT_MAX = 1000;
export const AUTO_PAUSE_AFTER_MAX = 10_000;

const RATE_LIMIT_MESSAGE = `rate_limit must be an integer from 1 to ${RATE_LIMIT_MAX}, or null`;
const MAX_IN_FLIGHT_MESSAGE = `max_in_flight must be an integer from 1 to ${MAX_IN_FLIGHT_MAX}, or null`;
const AUTO_PAUSE_AFTER_MESSAGE = `auto_pause_after must be an integer from 1 to ${AUTO_PAUSE_AFTER_MAX}, or null`;
const sentAndNotNull = (_dto: object, value: unknown) => value !== undefined && value !== null;
const sent = (_dto: object, value: unknown) => value !== undefined;

/** The flow-control fields of a destination, shared by POST and PATCH (only the fields sent change). */
export class FlowControlFieldsDto {
  /**
   * At most this many attempts per `rate_limit_period`, across all workers, evenly spaced; null: no limit.
   * @example 50
   */
  @ApiProperty({ type: 'integer', nullable: true, required: false, minimum: 1, maximum: RATE_LIMIT_MAX })
  @ValidateIf(sentAndNotNull)
  @IsInt({ message: RATE_LIMIT_MESSAGE })
  @Min(1, { message: RATE_LIMIT_MESSAGE })
  @Max(RATE_LIMIT_MAX, { message: RATE_LIMIT_MESSAGE })
  rate_limit?: number | null;

  /** The period of `rate_limit`: `second` (default) or `minute`. */
  @ApiProperty({ enum: RATE_LIMIT_PERIODS, required: false, default: 'second' })
  @ValidateIf(sent)
  @IsIn(RATE_LIMIT_PERIODS, { message: 'rate_limit_period must be "second" or "minute"' })
  rate_limit_period?: RateLimitPeriod;

  /**
   * At most this many attempts to it at once, across all workers; null: a fair share of each worker.
   * @example 10
   */
  @ApiProperty({ type: 'integer', nullable: true, required: false, minimum: 1, maximum: MAX_IN_FLIGHT_MAX })
  @ValidateIf(sentAndNotNull)
  @IsInt({ message: MAX_IN_FLIGHT_MESSAGE })
  @Min(1, { message: MAX_IN_FLIGHT_MESSAGE })
  @Max(MAX_IN_FLIGHT_MAX, { message: MAX_IN_FLIGHT_MESSAGE })
  max_in_flight?: number | null;

  /**
   * true: its deliveries are held (no attempt, no retry used up) until it is resumed with false, which
   * sends the backlog within the limits. Unlike is_active: false, new events still get deliveries.
   */
  @ValidateIf(sent)
  @IsBoolean({ message: 'paused must be true or false' })
  paused?: boolean;

  /**
   * Pause it by itself after this many consecutive failed attempts (its deliveries are then held, as when
   * paused by hand, and `destination.paused` is notified); null (default): never.
   * @example 5
   */
  @ApiProperty({
    type: 'integer',
    nullable: true,
    required: false,
    minimum: 1,
    maximum: AUTO_PAUSE_AFTER_MAX,
  })
  @ValidateIf(sentAndNotNull)
  @IsInt({ message: AUTO_PAUSE_AFTER_MESSAGE })
  @Min(1, { message: AUTO_PAUSE_AFTER_MESSAGE })
  @Max(AUTO_PAUSE_AFTER_MAX, { message: AUTO_PAUSE_AFTER_MESSAGE })
  auto_pause_after?: number | null;

  /**
   * `fifo`: one attempt at a time, in capture order (a replay joins the end); a delivery that fails blocks
   * those after it until it is delivered or dead-lettered. `none` (default): no order, attempts in parallel.
   */
  @ApiProperty({ enum: DELIVERY_ORDERINGS, required: false, default: 'none' })
  @ValidateIf(sent)
  @IsIn(DELIVERY_ORDERINGS, { message: 'ordering must be "none" or "fifo"' })
  ordering?: DeliveryOrdering;
}
