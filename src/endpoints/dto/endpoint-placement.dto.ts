import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsUUID, Max, Min, ValidateIf } from 'class-validator';
import { IngestRuleFieldsDto } from './ingest-rules.dto';

export const RETENTION_DAYS_MAX = 3650;

const given = (_dto: object, value: unknown) => value !== undefined && value !== null;

/** Where an endpoint belongs and how long its events are kept: fields of both create and update. */
export class EndpointPlacementDto extends IngestRuleFieldsDto {
  /**
   * The team the endpoint belongs to (you must be a member, or above, of it); null: your own. On update,
   * moving an endpoint out of a team needs an admin of that team.
   */
  @ApiPropertyOptional({ type: 'string', format: 'uuid', nullable: true, example: null })
  // Ids are compared and answered in lower case, as the path's ids are (ResourceIdPipe).
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.toLowerCase() : value))
  @ValidateIf(given)
  @IsUUID('all', { message: 'team_id must be a team id (a UUID) or null' })
  team_id?: string | null;

  /** Keep events this many days when that is shorter than the plan's (RETENTION_DAYS); null: the plan's. */
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: RETENTION_DAYS_MAX,
    nullable: true,
    example: 30,
  })
  @ValidateIf(given)
  @IsInt({
    message: `retention_days must be a whole number of days from 1 to ${RETENTION_DAYS_MAX}, or null`,
  })
  @Min(1, {
    message: `retention_days must be a whole number of days from 1 to ${RETENTION_DAYS_MAX}, or null`,
  })
  @Max(RETENTION_DAYS_MAX, {
    message: `retention_days must be a whole number of days from 1 to ${RETENTION_DAYS_MAX}, or null`,
  })
  retention_days?: number | null;
}
