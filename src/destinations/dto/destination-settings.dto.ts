import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsValidBy } from '../../endpoints/dto/endpoint-fields';
import { filterRuleError, type FilterRule } from '../../ingest/filter';
import { FlowControlFieldsDto } from './flow-control-fields.dto';

export const FILTER_EXAMPLE = { body: { type: { $startsWith: 'invoice.' } }, headers: { 'x-env': 'live' } };

/** A filter as the API takes it: null, or a valid rule (else the message names the path at fault). */
export function filterFieldError(value: unknown): string | null {
  return value === null ? null : filterRuleError(value, 'filter');
}

/** What POST and PATCH of a destination share: flow control and the filter (only the fields sent change). */
export class DestinationSettingsDto extends FlowControlFieldsDto {
  /**
   * Which events it gets, decided when each is captured: a rule on `body`, `headers` (lower-case names),
   * `query` and `method` with values, nested objects and `$eq $neq $in $nin $exists $gt $gte $lt $lte
   * $startsWith $contains $and $or $not` (README, "Destination filters"); null: every event.
   */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: FILTER_EXAMPLE,
  })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsValidBy(filterFieldError)
  filter?: FilterRule | null;
}
