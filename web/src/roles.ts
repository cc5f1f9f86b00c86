import { type Endpoint, type Role, ROLES, type Team } from './types';

/**
 * What a role may do in the dashboard, mirroring the API's rule (src/access/roles.ts): each role may do
 * everything the roles before it in ROLES (weakest first, from the OpenAPI document) may. The API decides;
 * the dashboard only hides what would be refused, so that a viewer sees no button that can only get a 403.
 */
function atLeast(role: Role | null | undefined, needed: Role): boolean {
  return role != null && ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** Change an endpoint, its destinations and issues; replay its events; create endpoints in a team. */
export function canWrite(role: Role | null | undefined): boolean {
  return atLeast(role, 'member');
}

/** Invite, change and remove members, rename the team, move endpoints in and out, read the audit log. */
export function canManage(role: Role | null | undefined): boolean {
  return atLeast(role, 'admin');
}

/** Delete the team, make or unmake owners. */
export function isOwner(role: Role | null | undefined): boolean {
  return role === 'owner';
}

/** Each role in a word, and what it may do (“Admin — does what a member does, and …”). */
export const ROLE_TEXT: Record<Role, { label: string; can: string }> = {
  viewer: { label: 'Viewer', can: 'reads the team’s endpoints, events and issues, and changes nothing' },
  member: {
    label: 'Member',
    can: 'reads and changes the team’s endpoints and destinations, replays events, handles issues',
  },
  admin: { label: 'Admin', can: 'does what a member does, and invites, changes and removes members' },
  owner: {
    label: 'Owner',
    can: 'does what an admin does, deletes the team and makes owners, and is alerted of the team’s dead letters and issues',
  },
};

/**
 * The roles `caller` may give a member who has `current`: none below admin; an admin may not touch an
 * owner nor make one; an owner may give any role (the API keeps the last owner: 409).
 */
export function assignableRoles(caller: Role, current: Role): Role[] {
  if (!canManage(caller)) return [];
  if (isOwner(caller)) return [...ROLES];
  if (isOwner(current)) return [];
  return ROLES.filter((role) => !isOwner(role));
}

/** Whether `caller` may remove a member who has `role` (leaving, one's own removal, is for everyone). */
export function canRemoveMember(caller: Role, role: Role): boolean {
  return canManage(caller) && (isOwner(caller) || !isOwner(role));
}

/**
 * The teams the caller may move the endpoint to, as the API rules: out of its team needs an admin there
 * (a personal endpoint's role is `owner`), into a team a member or above there. The team it is in is
 * listed too (to stay). Null when the caller may not move it: below admin where it is, or a personal
 * endpoint and no team to take it.
 */
export function moveTargets(
  endpoint: Pick<Endpoint, 'team_id' | 'role'>,
  teams: readonly Team[],
): Team[] | null {
  if (!canManage(endpoint.role)) return null;
  const targets = teams.filter((team) => canWrite(team.role) || team.id === endpoint.team_id);
  return endpoint.team_id === null && targets.length === 0 ? null : targets;
}
