import { ApiProperty } from '@nestjs/swagger';
import { IsValidBy } from '../../common/dto/fields';
import { FILTER_EXAMPLE, filterFieldError } from '../../ingest/filter-field';
import type { FilterRule } from '../../ingest/filter';

export class EventRouteDto {
  /** The destination. */
  id!: string;
  url!: string;
  /** Whether the event, were it captured now, would get a delivery to it. */
  receives!: boolean;
  /** Why not (inactive, the filter's first mismatch, a failed enforced signature); null when it receives it. */
  reason!: string | null;
}

export class EventRoutingResponseDto {
  /** The endpoint's destinations, oldest first. */
  destinations!: EventRouteDto[];
}

export class TestFilterDto {
  /** A destination filter (or null) to try on the event; not saved. */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: FILTER_EXAMPLE })
  @IsValidBy((value) =>
    value === undefined ? 'filter is required (a rule object, or null)' : filterFieldError(value),
  )
  filter!: FilterRule | null;
}

export class FilterVerdictDto {
  matches!: boolean;
  /** The first part of the rule the event does not match; null when it matches. */
  reason!: string | null;
}
