import { ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { IsValidBy } from '../../common/dto/fields';
import { FILTER_EXAMPLE, filterFieldError } from '../../ingest/filter-field';
import type { FilterRule } from '../../ingest/filter';
import { FlowControlFieldsDto } from './flow-control-fields.dto';

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
