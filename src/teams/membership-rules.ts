import { ConflictException, ForbiddenException } from '@nestjs/common';
import { PERMISSIONS, type Role, roleAtLeast } from '../access/roles';

/** One change to one member: a new role, or their removal (`null`). */
export interface MembershipChange {
  caller: { userId: string; role: Role };
  target: { userId: string; role: Role };
  newRole: Role | null;
  /** The team's owners before the change. */
  owners: number;
}

/**
 * Throws unless the change is allowed, a 403 before a 409: anyone may leave (remove themselves); changing
 * or removing someone else needs team.manage (admin); making or unmaking an owner needs an owner; and the
 * team must keep at least one owner, who alone may delete it.
 */
export function assertMembershipChangeAllowed(change: MembershipChange): void {
  const { caller, target, newRole, owners } = change;
  const leaving = newRole === null && caller.userId === target.userId;
  const manage = PERMISSIONS['team.manage'];
  if (!leaving && !roleAtLeast(caller.role, manage))
    throw new ForbiddenException(
      `your role in this team is ${caller.role}; team.manage needs ${manage} or above`,
    );
  const touchesOwner = target.role === 'owner' || newRole === 'owner';
  const ownerOnly = PERMISSIONS['team.delete'];
  if (touchesOwner && !roleAtLeast(caller.role, ownerOnly))
    throw new ForbiddenException(
      `your role in this team is ${caller.role}; making or changing an owner needs ${ownerOnly}`,
    );
  if (target.role === 'owner' && newRole !== 'owner' && owners <= 1)
    throw new ConflictException(
      leaving
        ? 'you are the last owner of this team: make another member owner first, or delete the team'
        : 'a team must keep at least one owner: make another member owner first',
    );
}
