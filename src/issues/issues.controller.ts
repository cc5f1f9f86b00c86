import { Body, Controller, Get, Param, Patch, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Grant } from '../access/access.repository';
import { Can } from '../access/can.decorator';
import { CurrentGrant } from '../access/current-grant.decorator';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { IssueDetailResponseDto, IssueListResponseDto, IssueResponseDto } from './dto/issue.dto';
import { ListIssuesQueryDto } from './dto/list-issues.query';
import { UpdateIssueDto } from './dto/update-issue.dto';
import { IssuesService } from './issues.service';

@ApiTags('issues')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/issues')
export class IssuesController {
  constructor(private readonly issues: IssuesService) {}

  @Get()
  @ApiOperation({
    summary:
      "Your and your teams' destinations' issues (failures grouped by kind), the most recently failing first",
  })
  @ApiOkResponse({ type: IssueListResponseDto })
  @ApiBadRequestResponse({
    description: 'status is not open, acknowledged or resolved; endpoint_id not a UUID',
  })
  async list(
    @CurrentUser() user: AuthUser,
    @Query() query: ListIssuesQueryDto,
  ): Promise<IssueListResponseDto> {
    return { issues: await this.issues.list(user.id, query) };
  }

  @Get(':iid')
  @Can('endpoint.read', 'issue', 'iid')
  @ApiOperation({
    summary: 'One issue, with the AI diagnosis of its latest failed delivery (plan starter and above)',
  })
  @ApiOkResponse({ type: IssueDetailResponseDto })
  @ApiNotFoundResponse({ description: "No such issue (or not yours, nor your team's)" })
  async get(
    @CurrentUser() user: AuthUser,
    @CurrentGrant() grant: Grant,
    @Param('iid', new ResourceIdPipe('issue')) id: string,
  ): Promise<IssueDetailResponseDto> {
    return { issue: await this.issues.get(grant, user.id, id) };
  }

  @Patch(':iid')
  @Can('endpoint.write', 'issue', 'iid')
  @ApiOperation({
    summary: 'Acknowledge an issue, set it open again, or resolve it by hand',
    description:
      'An acknowledged issue still counts failures and still resolves by itself when the destination ' +
      'delivers again. A resolved issue is not reopened: the next failure of its kind opens a new one.',
  })
  @ApiOkResponse({ type: IssueResponseDto })
  @ApiBadRequestResponse({ description: 'status is not open, acknowledged or resolved' })
  @ApiNotFoundResponse({ description: "No such issue (or not yours, nor your team's)" })
  @ApiConflictResponse({ description: 'The issue is resolved: it cannot be opened or acknowledged again' })
  async update(
    @Param('iid', new ResourceIdPipe('issue')) id: string,
    @Body() body: UpdateIssueDto,
  ): Promise<IssueResponseDto> {
    return { issue: await this.issues.setStatus(id, body.status) };
  }
}
