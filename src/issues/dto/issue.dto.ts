import { ApiProperty } from '@nestjs/swagger';
import { DiagnosisDto } from '../../ai/dto/ai.dto';
import { FAILURE_KINDS, type FailureKind } from '../../outbound/delivery-sender';
import { ISSUE_STATUSES, type IssueStatus } from '../issue';

export class IssueDestinationDto {
  /** @example 5f0c6f0e-1f7a-4c1b-9a55-0c5d3f6f2b11 */
  id!: string;
  /** @example https://api.example.com/webhooks/stripe */
  url!: string;
}

export class IssueDto {
  /** @example 0b6f1f8e-3c2d-4a57-9a4e-2f1c8d9e7a10 */
  id!: string;
  endpoint_id!: string;
  destination!: IssueDestinationDto;
  /** What kind of failure: HTTP 4xx (3xx too: redirects are not followed), HTTP 5xx, or no response. */
  @ApiProperty({ enum: FAILURE_KINDS })
  kind!: FailureKind;
  /** The latest failure in words. @example HTTP 503 Service Unavailable */
  summary!: string;
  /** `open`, `acknowledged` (someone is on it) or `resolved` (the destination delivered again, or by hand). */
  @ApiProperty({ enum: ISSUE_STATUSES })
  status!: IssueStatus;
  /** Failed attempts of this kind since it opened. @example 12 */
  failure_count!: number;
  /** ISO 8601 UTC: its first failure. */
  first_seen_at!: string;
  /** ISO 8601 UTC: its latest failure. */
  last_seen_at!: string;
  /** The event whose delivery failed last. */
  last_event_id!: string | null;
  /** ISO 8601 UTC; null until resolved. */
  resolved_at!: string | null;
}

export class IssueDetailDto extends IssueDto {
  /**
   * The AI engine's diagnosis of the latest failed delivery (plan starter and above); null on the free
   * plan, when that event is gone, or when the caller has had 30 new (uncached) diagnoses from this route
   * in the last minute.
   */
  @ApiProperty({ type: DiagnosisDto, nullable: true })
  diagnosis!: DiagnosisDto | null;
}

export class IssueResponseDto {
  issue!: IssueDto;
}

export class IssueDetailResponseDto {
  issue!: IssueDetailDto;
}

export class IssueListResponseDto {
  /** The most recently failing first. */
  issues!: IssueDto[];
}
