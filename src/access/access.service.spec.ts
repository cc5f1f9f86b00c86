import type { AuthUser } from '../common/decorators/current-user.decorator';
import type { AccessRepository, StoredGrant } from './access.repository';
import { AccessService } from './access.service';
import type { Role } from './roles';

describe(AccessService.name, () => {
  const grantOf = jest.fn<Promise<StoredGrant | null>, [string, string, string]>();
  const sut = new AccessService({ grantOf } as unknown as AccessRepository);
  type Credential = 'session' | 'read key' | 'write key';
  const caller = (credential: Credential = 'session'): AuthUser => ({
    id: 'u_1',
    email: 'ada@example.com',
    plan: 'team',
    ...(credential === 'session'
      ? {}
      : { apiKey: { id: 'k_1', scope: credential === 'read key' ? 'read' : 'write', expiresAt: null } }),
  });
  const asRole = (role: Role) =>
    grantOf.mockResolvedValue({ role, plan: 'team', teamId: 't_1', endpointId: 'e_1' });

  describe('mayWrite, which decides who is shown secrets', () => {
    it.each([
      ['viewer', 'session', false],
      ['member', 'session', true],
      ['admin', 'session', true],
      ['owner', 'session', true],
      ['owner', 'write key', true],
      ['owner', 'read key', false],
      ['member', 'read key', false],
      ['viewer', 'write key', false],
    ] as const)("an endpoint's %s through a %s: %s", async (role, credential, expected) => {
      asRole(role);
      const grant = await sut.require(caller(credential), 'endpoint.read', 'endpoint', 'e_1');
      expect(grant.mayWrite).toBe(expected);
    });

    it("judges by the kind's write permission: an admin may write a team, a member may not", async () => {
      asRole('admin');
      expect((await sut.require(caller(), 'team.read', 'team', 't_1')).mayWrite).toBe(true);
      asRole('member');
      expect((await sut.require(caller(), 'team.read', 'team', 't_1')).mayWrite).toBe(false);
    });
  });
});
