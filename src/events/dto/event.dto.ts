import { ApiProperty } from '@nestjs/swagger';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../model/delivery.entity';
import {
  EVENT_STATUSES,
  type EventStatus,
  VERIFICATION_STATUSES,
  type VerificationStatus,
} from '../../model/event.entity';

export class EventVerificationDto {
  /** `verified`, `failed` (the endpoint checks the provider's signature and this one did not pass) or `none`. */
  @ApiProperty({ enum: VERIFICATION_STATUSES })
  status!: VerificationStatus;
  /** Why it failed; null when verified or none. @example timestamp is 612 s old (tolerance 300 s) */
  reason!: string | null;
}

export class EventDto {
  id!: string;
  endpoint_id!: string;
  @ApiProperty({ enum: EVENT_STATUSES })
  status!: EventStatus;
  /** The HTTP method of the captured request. @example POST */
  method!: string;
  /** All request headers as received, names in lower case. */
  @ApiProperty({
    type: 'object',
    additionalProperties: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    example: { 'content-type': 'application/json' },
  })
  headers!: Record<string, string | string[]>;
  /** The raw query string, without "?" ("" when there was none). @example source=stripe&attempt=1 */
  query!: string;
  /** The exact body: as UTF-8 text, or base64 when body_encoding is "base64". */
  body!: string;
  /** Present, as "base64", only when the body is not valid UTF-8. */
  @ApiProperty({ enum: ['base64'], required: false })
  body_encoding?: 'base64';
  /** The sender's IP (from X-Forwarded-For only when TRUST_PROXY=true). @example 203.0.113.7 */
  source_ip!: string | null;
  /** ISO 8601 UTC. @example 2026-11-23T10:00:00.000Z */
  received_at!: string;
  /** The provider's signature, checked when the endpoint has a `verification` rule. */
  verification!: EventVerificationDto;
  /** Repeats of this event that the endpoint's dedup answered without storing them. @example 0 */
  duplicate_count!: number;
  /**
   * Present, as true, only in the events list, when the body was longer than 65,536 characters (bytes,
   * for a body that is not text) and is cut to them there: the event's own route returns it whole.
   */
  @ApiProperty({ enum: [true], required: false })
  body_truncated?: true;
}

export class DeliveryAttemptDto {
  /** ISO 8601 UTC. */
  at!: string;
  /** null when no HTTP response was received (time-out, DNS, TLS, connection refused, refused address). */
  response_code!: number | null;
  duration_ms!: number;
  error!: string | null;
  /** The first 1 KiB of this attempt's response body (null without a response). */
  response_body!: string | null;
}

export class DeliveryDestinationDto {
  /** null when the destination has since been removed. */
  id!: string | null;
  /** The URL the delivery was made to. */
  url!: string;
}

export class DeliveryDto {
  id!: string;
  event_id!: string;
  destination!: DeliveryDestinationDto;
  @ApiProperty({ enum: DELIVERY_STATUSES })
  status!: DeliveryStatus;
  attempt_count!: number;
  response_code!: number | null;
  /** The first 1 KiB of the latest response body. */
  response_body!: string | null;
  /** ISO 8601 UTC; null before the first attempt. */
  last_attempted_at!: string | null;
  /** ISO 8601 UTC. */
  created_at!: string;
  /** Every attempt, oldest first. */
  attempts!: DeliveryAttemptDto[];
}

export class EventWithDeliveriesDto extends EventDto {
  /** Newest first. */
  deliveries!: DeliveryDto[];
}

export class PaginationDto {
  /** @example 1 */
  page!: number;
  /** @example 50 */
  limit!: number;
  /** Events matching the filters; with `q`, at most 1,000 (see total_capped). */
  total!: number;
  /** ceil(total / limit); 0 when nothing matches. */
  pages!: number;
  /**
   * Present (true) when `q` matched more than 1,000 events: `total` and `pages` then count the first
   * 1,000 matches, and later pages can still be read. A substring search is not counted in full, so that a
   * common word stays fast among millions of events.
   */
  total_capped?: boolean;
}

export class EventListResponseDto {
  /** Newest first by received_at. */
  events!: EventDto[];
  pagination!: PaginationDto;
}

export class EventResponseDto {
  event!: EventWithDeliveriesDto;
}

export class DeliveryListResponseDto {
  /** Newest first. */
  deliveries!: DeliveryDto[];
}
