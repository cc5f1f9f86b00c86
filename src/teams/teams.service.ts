import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { NOT_FOUND } from '../access/access.service';
import { revoked, Revocations } from '../access/revocations';
import type { Role } from '../access/roles';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import type { TeamMemberDto } from './dto/team-member.dto';
import type { TeamDto } from './dto/team.dto';
import { assertMembershipChangeAllowed } from './membership-rules';
import type { TeamMember } from './team';
import { toTeamDto, toTeamMemberDto } from './team.presenter';
import { TeamsRepository } from './teams.repository';

export const MEMBER_NOT_FOUND = 'member not found';

/**
 * Teams and their members. Routes that name a team reach these methods only once the access guard has
 * found the caller's role there sufficient (@Can); the rules that depend on whom a change touches (owners,
 * leaving) are applied here, under the team's lock.
 */
@Injectable()
export class TeamsService {
  constructor(
    private readonly teams: TeamsRepository,
    private readonly revocations: Revocations,
  ) {}

  /** A new team, with the caller as its owner. */
  async create(caller: AuthUser, name: string): Promise<TeamDto> {
    return toTeamDto(await this.teams.create(caller.id, name));
  }

  async list(caller: AuthUser): Promise<TeamDto[]> {
    return (await this.teams.listOfMember(caller.id)).map(toTeamDto);
  }

  async get(caller: AuthUser, teamId: string): Promise<TeamDto> {
    const team = await this.teams.findOfMember(caller.id, teamId);
    if (!team) throw new NotFoundException(NOT_FOUND.team);
    return toTeamDto(team);
  }

  async rename(caller: AuthUser, teamId: string, name: string): Promise<TeamDto> {
    await this.teams.rename(teamId, name);
    return this.get(caller, teamId);
  }

  /** Deletes the team with its members and invitations; refused (409) while endpoints belong to it. */
  async remove(teamId: string): Promise<void> {
    if (await this.teams.deleteUnlessItHasEndpoints(teamId)) return;
    const endpoints = await this.teams.countEndpoints(teamId);
    // No endpoint left: the team was deleted meanwhile by another request.
    if (endpoints === 0) throw new NotFoundException(NOT_FOUND.team);
    throw new ConflictException(
      `a team with endpoints cannot be deleted: move or delete its ${endpoints} endpoint${endpoints === 1 ? '' : 's'} first`,
    );
  }

  async listMembers(teamId: string): Promise<TeamMemberDto[]> {
    return (await this.teams.listMembers(teamId)).map(toTeamMemberDto);
  }

  /** Whether the (normalised) email is a member's: an invitation to it would be pointless. */
  hasMemberWithEmail(teamId: string, email: string): Promise<boolean> {
    return this.teams.hasMemberWithEmail(teamId, email);
  }

  async setRole(caller: AuthUser, teamId: string, userId: string, role: Role): Promise<TeamMemberDto> {
    return toTeamMemberDto(await this.change(caller, teamId, userId, role));
  }

  /**
   * Removes a member, or the caller themselves (leaving): their access ends with this request, and their
   * live streams of the team's endpoints end in every process.
   */
  async removeMember(caller: AuthUser, teamId: string, userId: string): Promise<void> {
    await this.change(caller, teamId, userId, null);
    await this.revocations.announce(revoked.membership(teamId, userId));
  }

  /**
   * Gives the member `newRole`, or removes them (`null`), judged by the caller's and the member's roles as
   * they are under the team's lock (not as they were when the request came in).
   */
  private change(
    caller: AuthUser,
    teamId: string,
    userId: string,
    newRole: Role | null,
  ): Promise<TeamMember> {
    return this.teams.withTeamLock(teamId, async (trx) => {
      const members = await this.teams.membersAmong(trx, teamId, [caller.id, userId]);
      const callerMember = members.find((member) => member.userId === caller.id);
      if (!callerMember) throw new NotFoundException(NOT_FOUND.team);
      const target = members.find((member) => member.userId === userId);
      if (!target) throw new NotFoundException(MEMBER_NOT_FOUND);
      assertMembershipChangeAllowed({
        caller: callerMember,
        target,
        newRole,
        owners: await this.teams.countOwners(trx, teamId),
      });
      if (newRole === null) await this.teams.removeMember(trx, teamId, userId);
      else await this.teams.setRole(trx, teamId, userId, newRole);
      return { ...target, role: newRole ?? target.role };
    });
  }
}
