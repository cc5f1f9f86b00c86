import { Body, Controller, Delete, Get, Param, Patch } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { Can } from '../access/can.decorator';
import { OkDto } from '../common/dto/ok.dto';
import { type AuthUser, CurrentUser } from '../common/decorators/current-user.decorator';
import { ResourceIdPipe } from '../common/pipes/resource-id.pipe';
import { TeamMemberListResponseDto, TeamMemberResponseDto, UpdateTeamMemberDto } from './dto/team-member.dto';
import { TEAM_NOT_FOUND } from './teams.controller';
import { TeamsService } from './teams.service';

const MEMBER_NOT_FOUND = { description: 'No such team of yours, or no such member in it' };

@ApiTags('teams')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/teams/:tid/members')
export class TeamMembersController {
  constructor(private readonly teams: TeamsService) {}

  @Get()
  @Can('team.read', 'team', 'tid')
  @ApiOperation({ summary: "A team's members with their roles, the earliest to join first" })
  @ApiOkResponse({ type: TeamMemberListResponseDto })
  @ApiNotFoundResponse(TEAM_NOT_FOUND)
  async list(@Param('tid', new ResourceIdPipe('team')) teamId: string): Promise<TeamMemberListResponseDto> {
    return { members: await this.teams.listMembers(teamId) };
  }

  @Patch(':uid')
  @Can('team.manage', 'team', 'tid')
  @ApiOperation({
    summary: "Change a member's role (admin and above)",
    description:
      'Admins may make anyone but an owner admin, member or viewer; making someone owner, or changing an ' +
      "owner's role, needs an owner (403 otherwise). The team keeps at least one owner (409).",
  })
  @ApiOkResponse({ type: TeamMemberResponseDto })
  @ApiBadRequestResponse({ description: 'role is not owner, admin, member or viewer' })
  @ApiNotFoundResponse(MEMBER_NOT_FOUND)
  @ApiConflictResponse({ description: 'The change would leave the team without an owner' })
  async update(
    @CurrentUser() user: AuthUser,
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
    @Param('uid', new ResourceIdPipe('member')) userId: string,
    @Body() body: UpdateTeamMemberDto,
  ): Promise<TeamMemberResponseDto> {
    return { member: await this.teams.setRole(user, teamId, userId, body.role) };
  }

  @Delete(':uid')
  @Can('team.read', 'team', 'tid')
  @ApiOperation({
    summary: 'Remove a member (admin and above), or leave the team (your own user id, any role)',
    description:
      'Their access to the team and its endpoints ends at once. Removing an owner needs an owner; the ' +
      'team keeps at least one owner (409).',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiForbiddenResponse({ description: 'Removing someone else needs admin; removing an owner needs owner' })
  @ApiNotFoundResponse(MEMBER_NOT_FOUND)
  @ApiConflictResponse({ description: 'The last owner cannot leave or be removed' })
  async remove(
    @CurrentUser() user: AuthUser,
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
    @Param('uid', new ResourceIdPipe('member')) userId: string,
  ): Promise<OkDto> {
    await this.teams.removeMember(user, teamId, userId);
    return { ok: true };
  }
}
