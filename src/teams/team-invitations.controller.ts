import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Can } from '../access/can.decorator';
import { OkDto } from '../common/dto/ok.dto';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import {
  AcceptTeamInvitationDto,
  CreateTeamInvitationDto,
  TeamInvitationListResponseDto,
  TeamInvitationResponseDto,
} from './dto/team-invitation.dto';
import { TeamResponseDto } from './dto/team.dto';
import { MAX_PENDING_INVITATIONS, TeamInvitationsService } from './team-invitations.service';
import { TEAM_NOT_FOUND } from './teams.controller';

@ApiTags('teams')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api')
export class TeamInvitationsController {
  constructor(private readonly invitations: TeamInvitationsService) {}

  @Post('teams/:tid/invitations')
  @Can('team.manage', 'team', 'tid')
  @ApiOperation({
    summary: 'Invite someone by email (admin and above): they get a link that works once, for 7 days',
    description:
      'Only the user registered with that address may accept. A new invitation to the same address ' +
      'replaces the earlier one (its link stops working).',
  })
  @ApiCreatedResponse({ type: TeamInvitationResponseDto })
  @ApiBadRequestResponse({ description: 'email or role is invalid (the message names the field)' })
  @ApiNotFoundResponse(TEAM_NOT_FOUND)
  @ApiConflictResponse({
    description: `The address is a member's already, or the team has ${MAX_PENDING_INVITATIONS} pending invitations`,
  })
  @ApiServiceUnavailableResponse({ description: 'The mail could not be sent: no invitation was made' })
  async create(
    @CurrentUser() user: AuthUser,
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
    @Body() body: CreateTeamInvitationDto,
  ): Promise<TeamInvitationResponseDto> {
    return { invitation: await this.invitations.invite(user, teamId, body) };
  }

  @Get('teams/:tid/invitations')
  @Can('team.manage', 'team', 'tid')
  @ApiOperation({ summary: "A team's pending invitations, newest first (admin and above)" })
  @ApiOkResponse({ type: TeamInvitationListResponseDto })
  @ApiNotFoundResponse(TEAM_NOT_FOUND)
  async list(
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
  ): Promise<TeamInvitationListResponseDto> {
    return { invitations: await this.invitations.listPending(teamId) };
  }

  @Delete('teams/:tid/invitations/:invid')
  @Can('team.manage', 'team', 'tid')
  @ApiOperation({ summary: 'Revoke an invitation: its link stops working (admin and above)' })
  @ApiOkResponse({ type: OkDto })
  @ApiNotFoundResponse({ description: 'No such team of yours, or no such unaccepted invitation in it' })
  async revoke(
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
    @Param('invid', new ResourceIdPipe('invitation')) invitationId: string,
  ): Promise<OkDto> {
    await this.invitations.revoke(teamId, invitationId);
    return { ok: true };
  }

  @Post('invitations/accept')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Accept an invitation: join its team with its role (signed in with the address invited)',
  })
  @ApiOkResponse({ type: TeamResponseDto })
  @ApiBadRequestResponse({ description: 'token is unknown, already used, revoked or expired' })
  @ApiForbiddenResponse({ description: 'The invitation was sent to another email address' })
  @ApiConflictResponse({ description: 'You are a member of the team already' })
  async accept(
    @CurrentUser() user: AuthUser,
    @Body() body: AcceptTeamInvitationDto,
  ): Promise<TeamResponseDto> {
    return { team: await this.invitations.accept(user, body.token) };
  }
}
