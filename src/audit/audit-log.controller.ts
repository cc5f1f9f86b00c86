import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { AuditLogService } from './audit-log.service';
import { AuditLogResponseDto } from './dto/audit-entry.dto';
import { ListAuditLogQuery } from './dto/list-audit-log.query';

@ApiTags('audit-log')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/audit-log')
export class AuditLogController {
  constructor(private readonly auditLog: AuditLogService) {}

  @Get()
  @ApiOperation({
    summary: 'Every write through the API, newest first: of a team, of an endpoint, or of your own account',
    description:
      'team_id: the team’s log (its admins and owners); endpoint_id: the endpoint’s (its owner, or an admin ' +
      'of its team); both: the entries matching both; neither: your own account’s (your endpoints outside ' +
      'teams, API keys, notification channels). Secret values are never recorded.',
  })
  @ApiOkResponse({ type: AuditLogResponseDto })
  @ApiBadRequestResponse({ description: 'team_id or endpoint_id is not a UUID, or page or limit is invalid' })
  @ApiForbiddenResponse({ description: 'Your role in the team is below admin' })
  @ApiNotFoundResponse({ description: 'No such team or endpoint (or not yours)' })
  list(@CurrentUser() user: AuthUser, @Query() query: ListAuditLogQuery): Promise<AuditLogResponseDto> {
    return this.auditLog.list(user, query);
  }
}
