/** A member's roles in a team, weakest first: each role may do everything the roles before it may. */
export const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];

/** The roles an invitation may offer: an owner is made by another owner, from a member. */
export const INVITABLE_ROLES = ['admin', 'member', 'viewer'] as const satisfies readonly Role[];
export type InvitableRole = (typeof INVITABLE_ROLES)[number];

export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/**
 * What a caller may do, and the weakest role that may do it. A user is the `owner` of everything of
 * their own (endpoints outside teams, API keys, notification channels).
 */
export const PERMISSIONS = {
  /** Read an endpoint and everything under it: events, destinations, replays, issues, stats, AI. */
  'endpoint.read': 'viewer',
  /** Change an endpoint or its destinations, delete it, replay its events, acknowledge its issues. */
  'endpoint.write': 'member',
  /** See a team and its members. */
  'team.read': 'viewer',
  /** Invite, change and remove members; move endpoints out of the team. */
  'team.manage': 'admin',
  /** Read the audit log of a team or of one endpoint (one's own endpoints: their owner). */
  'audit.read': 'admin',
  /** Delete the team, make or unmake owners. */
  'team.delete': 'owner',
  /** One's own API keys and notification channels. */
  'account.manage': 'owner',
} as const satisfies Record<string, Role>;
export type Permission = keyof typeof PERMISSIONS;
