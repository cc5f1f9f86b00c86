import { Body, Controller, Delete, Get, Param, Patch, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiCreatedResponse,
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
import { RequiresPlan } from '../access/requires-plan.decorator';
import { CreateTeamDto, TeamListResponseDto, TeamResponseDto, UpdateTeamDto } from './dto/team.dto';
import { TeamsService } from './teams.service';

export const TEAM_NOT_FOUND = { description: 'No such team (or you are not a member of it)' };

@ApiTags('teams')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'Missing, invalid or expired access token' })
@Controller('api/teams')
export class TeamsController {
  constructor(private readonly teams: TeamsService) {}

  @Post()
  @RequiresPlan('team')
  @ApiOperation({ summary: 'Create a team (plan team); you become its owner' })
  @ApiCreatedResponse({ type: TeamResponseDto })
  @ApiBadRequestResponse({ description: 'name is missing or invalid' })
  async create(@CurrentUser() user: AuthUser, @Body() body: CreateTeamDto): Promise<TeamResponseDto> {
    return { team: await this.teams.create(user, body.name) };
  }

  @Get()
  @ApiOperation({ summary: 'The teams you are a member of, with your role in each, oldest first' })
  @ApiOkResponse({ type: TeamListResponseDto })
  async list(@CurrentUser() user: AuthUser): Promise<TeamListResponseDto> {
    return { teams: await this.teams.list(user) };
  }

  @Get(':tid')
  @Can('team.read', 'team', 'tid')
  @ApiOperation({ summary: 'One of your teams, with your role in it' })
  @ApiOkResponse({ type: TeamResponseDto })
  @ApiNotFoundResponse(TEAM_NOT_FOUND)
  async get(
    @CurrentUser() user: AuthUser,
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
  ): Promise<TeamResponseDto> {
    return { team: await this.teams.get(user, teamId) };
  }

  @Patch(':tid')
  @Can('team.manage', 'team', 'tid')
  @ApiOperation({ summary: 'Rename a team (admin and above)' })
  @ApiOkResponse({ type: TeamResponseDto })
  @ApiBadRequestResponse({ description: 'name is missing or invalid' })
  @ApiNotFoundResponse(TEAM_NOT_FOUND)
  async update(
    @CurrentUser() user: AuthUser,
    @Param('tid', new ResourceIdPipe('team')) teamId: string,
    @Body() body: UpdateTeamDto,
  ): Promise<TeamResponseDto> {
    return { team: await this.teams.rename(user, teamId, body.name) };
  }

  @Delete(':tid')
  @Can('team.delete', 'team', 'tid')
  @ApiOperation({
    summary: 'Delete a team with its members and invitations (owner only)',
    description: 'Refused (409) while endpoints belong to the team: move or delete them first.',
  })
  @ApiOkResponse({ type: OkDto })
  @ApiForbiddenResponse({ description: 'Your role in the team is below owner' })
  @ApiNotFoundResponse(TEAM_NOT_FOUND)
  @ApiConflictResponse({ description: 'Endpoints still belong to the team' })
  async remove(@Param('tid', new ResourceIdPipe('team')) teamId: string): Promise<OkDto> {
    await this.teams.remove(teamId);
    return { ok: true };
  }
}
