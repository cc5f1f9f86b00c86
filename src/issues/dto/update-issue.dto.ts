import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { ISSUE_STATUSES, type IssueStatus } from '../issue';

export class UpdateIssueDto {
  /**
   * `acknowledged`: someone is on it (it still counts failures and still resolves by itself); `open`: back
   * to open; `resolved`: closed by hand (the next failure of its kind opens a new issue). A resolved issue
   * is not reopened (409).
   * @example acknowledged
   */
  @ApiProperty({ enum: ISSUE_STATUSES })
  @IsIn(ISSUE_STATUSES, { message: 'status must be "open", "acknowledged" or "resolved"' })
  status!: IssueStatus;
}
