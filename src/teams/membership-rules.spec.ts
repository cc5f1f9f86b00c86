import { ConflictException, ForbiddenException } from '@nestjs/common';
import type { Role } from '../access/roles';
import { assertMembershipChangeAllowed, type MembershipChange } from './membership-rules';

const CALLER = 'caller';
const OTHER = 'other';

/** `caller` (with `callerRole`) changes `target` (themselves when `self`) to `newRole` (null: removes them). */
function change(
  callerRole: Role,
  targetRole: Role,
  newRole: Role | null,
  { self = false, owners = 2 } = {},
): MembershipChange {
  return {
    caller: { userId: CALLER, role: callerRole },
    target: { userId: self ? CALLER : OTHER, role: self ? callerRole : targetRole },
    newRole,
    owners,
  };
}

describe(assertMembershipChangeAllowed.name, () => {
  it.each([
    ['an admin makes a member admin', change('admin', 'member', 'admin')],
    ['an admin makes an admin viewer', change('admin', 'admin', 'viewer')],
    ['an admin removes a member', change('admin', 'member', null)],
    ['an admin demotes themselves', change('admin', 'admin', 'member', { self: true })],
    ['an owner makes a member owner', change('owner', 'member', 'owner', { owners: 1 })],
    ['an owner demotes another owner', change('owner', 'owner', 'admin', { owners: 2 })],
    ['an owner removes another owner', change('owner', 'owner', null, { owners: 2 })],
    ['a viewer leaves', change('viewer', 'viewer', null, { self: true })],
    ['an owner leaves while another owner stays', change('owner', 'owner', null, { self: true, owners: 2 })],
  ])('allows: %s', (_label, allowed) => {
    expect(() => assertMembershipChangeAllowed(allowed)).not.toThrow();
  });

  it.each([
    ['a member changes a viewer', change('member', 'viewer', 'member')],
    ['a viewer removes a member', change('viewer', 'member', null)],
    ['a member promotes themselves', change('member', 'member', 'admin', { self: true })],
    ['an admin makes a member owner', change('admin', 'member', 'owner')],
    ['an admin demotes an owner', change('admin', 'owner', 'admin')],
    ['an admin removes an owner', change('admin', 'owner', null)],
  ])('refuses with 403: %s', (_label, refused) => {
    expect(() => assertMembershipChangeAllowed(refused)).toThrow(ForbiddenException);
  });

  it.each([
    ['the last owner demotes themselves', change('owner', 'owner', 'admin', { self: true, owners: 1 })],
    ['the last owner leaves', change('owner', 'owner', null, { self: true, owners: 1 })],
  ])('refuses with 409: %s', (_label, refused) => {
    expect(() => assertMembershipChangeAllowed(refused)).toThrow(ConflictException);
  });

  it('says what a role below admin lacks, in the words of the access checks', () => {
    expect(() => assertMembershipChangeAllowed(change('viewer', 'member', 'viewer'))).toThrow(
      'your role in this team is viewer; team.manage needs admin or above',
    );
  });
});
