import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsUUID, ValidateIf } from 'class-validator';
import { ISSUE_STATUSES, type IssueStatus } from '../issue';

export class ListIssuesQueryDto {
  /** Only issues with this status; omitted: any. */
  @ApiPropertyOptional({ enum: ISSUE_STATUSES })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsIn(ISSUE_STATUSES, { message: 'status must be "open", "acknowledged" or "resolved"' })
  status?: IssueStatus;

  /** Only issues of this endpoint (one of yours); omitted: all your endpoints. */
  @ApiPropertyOptional({ format: 'uuid' })
  @ValidateIf((_dto, value) => value !== undefined)
  @IsUUID('all', { message: 'endpoint_id must be a UUID' })
  endpoint_id?: string;
}
