import type { TeamInvitationDto } from './dto/team-invitation.dto';
import type { TeamMemberDto } from './dto/team-member.dto';
import type { TeamDto } from './dto/team.dto';
import type { Team, TeamInvitation, TeamMember } from './team';

/** The API shapes of teams, their members and invitations (snake_case, ISO 8601 UTC times). */
export function toTeamDto(team: Team): TeamDto {
  return {
    id: team.id,
    name: team.name,
    role: team.role,
    member_count: team.memberCount,
    created_at: team.createdAt.toISOString(),
  };
}

export function toTeamMemberDto(member: TeamMember): TeamMemberDto {
  return {
    user: { id: member.userId, email: member.email, name: member.name },
    role: member.role,
    joined_at: member.joinedAt.toISOString(),
  };
}

export function toTeamInvitationDto(invitation: TeamInvitation): TeamInvitationDto {
  return {
    id: invitation.id,
    email: invitation.email,
    role: invitation.role,
    expires_at: invitation.expiresAt.toISOString(),
    created_at: invitation.createdAt.toISOString(),
  };
}
