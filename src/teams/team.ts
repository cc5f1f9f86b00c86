import type { InvitableRole, Role } from '../access/roles';

/** A team as one of its members sees it: with that member's role. */
export interface Team {
  id: string;
  name: string;
  /** The role of the member who asked. */
  role: Role;
  memberCount: number;
  createdAt: Date;
}

/** A member of a team, with who they are. */
export interface TeamMember {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: Date;
}

/** An invitation waiting for its recipient (its token is known only to the mail that carried it). */
export interface TeamInvitation {
  id: string;
  teamId: string;
  /** Trimmed and lower-cased, as users' emails are stored. */
  email: string;
  role: InvitableRole;
  expiresAt: Date;
  createdAt: Date;
}

/** Timestamps come back from the raw driver as strings. */
type Timestamp = Date | string;

export interface TeamRow {
  id: string;
  name: string;
  role: Role;
  member_count: number;
  created_at: Timestamp;
}

export interface TeamMemberRow {
  user_id: string;
  email: string;
  name: string;
  role: Role;
  created_at: Timestamp;
}

export interface TeamInvitationRow {
  id: string;
  team_id: string;
  email: string;
  role: InvitableRole;
  expires_at: Timestamp;
  created_at: Timestamp;
}

export function teamOf(row: TeamRow): Team {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    memberCount: row.member_count,
    createdAt: new Date(row.created_at),
  };
}

export function teamMemberOf(row: TeamMemberRow): TeamMember {
  return {
    userId: row.user_id,
    email: row.email,
    name: row.name,
    role: row.role,
    joinedAt: new Date(row.created_at),
  };
}

export function teamInvitationOf(row: TeamInvitationRow): TeamInvitation {
  return {
    id: row.id,
    teamId: row.team_id,
    email: row.email,
    role: row.role,
    expiresAt: new Date(row.expires_at),
    createdAt: new Date(row.created_at),
  };
}
