import { assignableRoles, canManage, canRemoveMember, canWrite, isOwner, moveTargets } from './roles';
import type { Role, Team } from './types';

/** What the dashboard shows to each role: the API's rule (src/access/roles.ts), from the weakest up. */
describe('roles', () => {
  const team = (id: string, role: Role): Team => ({
    id,
    name: `team ${id}`,
    role,
    member_count: 2,
    created_at: '2026-11-26T10:00:00.000Z',
  });

  it('lets members and above write, admins and above manage, owners delete', () => {
    expect(['viewer', 'member', 'admin', 'owner'].map((role) => canWrite(role as Role))).toEqual([
      false,
      true,
      true,
      true,
    ]);
    expect(['viewer', 'member', 'admin', 'owner'].map((role) => canManage(role as Role))).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect(['viewer', 'member', 'admin', 'owner'].map((role) => isOwner(role as Role))).toEqual([
      false,
      false,
      false,
      true,
    ]);
  });

  it('shows nothing that writes while the role is unknown (not loaded yet)', () => {
    expect(canWrite(undefined)).toBe(false);
    expect(canWrite(null)).toBe(false);
    expect(canManage(undefined)).toBe(false);
  });

  it('lets an owner give any role, an admin any but owner to non-owners, the others none', () => {
    expect(assignableRoles('owner', 'owner')).toEqual(['viewer', 'member', 'admin', 'owner']);
    expect(assignableRoles('owner', 'viewer')).toEqual(['viewer', 'member', 'admin', 'owner']);
    expect(assignableRoles('admin', 'viewer')).toEqual(['viewer', 'member', 'admin']);
    expect(assignableRoles('admin', 'admin')).toEqual(['viewer', 'member', 'admin']);
    expect(assignableRoles('admin', 'owner')).toEqual([]);
    expect(assignableRoles('member', 'viewer')).toEqual([]);
    expect(assignableRoles('viewer', 'viewer')).toEqual([]);
  });

  it('lets admins remove non-owners and owners remove anyone', () => {
    expect(canRemoveMember('owner', 'owner')).toBe(true);
    expect(canRemoveMember('admin', 'member')).toBe(true);
    expect(canRemoveMember('admin', 'owner')).toBe(false);
    expect(canRemoveMember('member', 'viewer')).toBe(false);
    expect(canRemoveMember('viewer', 'viewer')).toBe(false);
  });

  it('moves an endpoint out of a team its admins only, into a team its members and above', () => {
    const teams = [team('a', 'admin'), team('m', 'member'), team('v', 'viewer'), team('o', 'owner')];
    // One's own endpoint: to a team one may create endpoints in.
    expect(moveTargets({ team_id: null, role: 'owner' }, teams)?.map((t) => t.id)).toEqual(['a', 'm', 'o']);
    // No team to take it: not movable.
    expect(moveTargets({ team_id: null, role: 'owner' }, [team('v', 'viewer')])).toBeNull();
    // In a team one administers: back to personal, or to another team one administers (it stays listed).
    expect(moveTargets({ team_id: 'a', role: 'admin' }, [team('a', 'admin')])?.map((t) => t.id)).toEqual([
      'a',
    ]);
    // A member or a viewer of its team may not move it.
    expect(moveTargets({ team_id: 'm', role: 'member' }, teams)).toBeNull();
    expect(moveTargets({ team_id: 'm', role: 'viewer' }, teams)).toBeNull();
  });
});
