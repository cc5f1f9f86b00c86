import type { Invitation, InvitationInput, Role, Team, TeamMember } from '../types';
import { api } from './client';

/** `/api/teams/<tid>...` with every id segment encoded. */
function teamPath(teamId: string, ...rest: string[]): string {
  return ['/api/teams', teamId, ...rest]
    .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
    .join('/');
}

/** The caller's teams, each with the caller's role in it. */
export async function listTeams(signal?: AbortSignal): Promise<Team[]> {
  const { teams } = await api<{ teams: Team[] }>('/api/teams', { signal });
  return teams;
}

/** Creates a team, the caller its owner. Below the team plan: 403 with `upgrade_required`. */
export async function createTeam(name: string): Promise<Team> {
  const { team } = await api<{ team: Team }>('/api/teams', { method: 'POST', body: { name } });
  return team;
}

export async function getTeam(teamId: string, signal?: AbortSignal): Promise<Team> {
  const { team } = await api<{ team: Team }>(teamPath(teamId), { signal });
  return team;
}

export async function renameTeam(teamId: string, name: string): Promise<Team> {
  const { team } = await api<{ team: Team }>(teamPath(teamId), { method: 'PATCH', body: { name } });
  return team;
}

/** Deletes the team (owners only); 409 while it still has endpoints. */
export async function deleteTeam(teamId: string): Promise<void> {
  await api<{ ok: boolean }>(teamPath(teamId), { method: 'DELETE' });
}

export async function listMembers(teamId: string, signal?: AbortSignal): Promise<TeamMember[]> {
  const { members } = await api<{ members: TeamMember[] }>(teamPath(teamId, 'members'), { signal });
  return members;
}

/** Gives a member another role; the team keeps at least one owner (409). */
export async function setMemberRole(teamId: string, userId: string, role: Role): Promise<void> {
  await api<unknown>(teamPath(teamId, 'members', userId), { method: 'PATCH', body: { role } });
}

/** Removes a member at once; the caller's own id is leaving the team. */
export async function removeMember(teamId: string, userId: string): Promise<void> {
  await api<unknown>(teamPath(teamId, 'members', userId), { method: 'DELETE' });
}

/** The team's invitations not accepted, revoked or expired yet. */
export async function listInvitations(teamId: string, signal?: AbortSignal): Promise<Invitation[]> {
  const { invitations } = await api<{ invitations: Invitation[] }>(teamPath(teamId, 'invitations'), {
    signal,
  });
  return invitations;
}

/** Mails the address a single-use link to join the team with the role (valid 7 days). */
export async function inviteMember(teamId: string, input: InvitationInput): Promise<Invitation> {
  const { invitation } = await api<{ invitation: Invitation }>(teamPath(teamId, 'invitations'), {
    method: 'POST',
    body: input,
  });
  return invitation;
}

export async function revokeInvitation(teamId: string, invitationId: string): Promise<void> {
  await api<{ ok: boolean }>(teamPath(teamId, 'invitations', invitationId), { method: 'DELETE' });
}

/**
 * Accepts the invitation of the mail's link as the logged-in user: 400 when the token is unknown, used or
 * expired, 403 when it was sent to another address, 409 when the caller is a member already.
 */
export async function acceptInvitation(token: string): Promise<Team> {
  const { team } = await api<{ team: Team }>('/api/invitations/accept', { method: 'POST', body: { token } });
  return team;
}
