import { ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { AccessRepository, type Grant, type ResourceKind } from './access.repository';
import { type Permission, PERMISSIONS, type Role, roleAtLeast } from './roles';

/** How each kind of resource is named in a 404: the same words for a missing one and another's. */
export const NOT_FOUND: Record<ResourceKind, string> = {
  endpoint: 'endpoint not found',
  issue: 'issue not found',
  team: 'team not found',
  notification_channel: 'notification channel not found',
  api_key: 'API key not found',
};

/** The permission that changes a resource of each kind. */
const WRITE_PERMISSION: Record<ResourceKind, Permission> = {
  endpoint: 'endpoint.write',
  issue: 'endpoint.write',
  team: 'team.manage',
  notification_channel: 'account.manage',
  api_key: 'account.manage',
};

/**
 * Whether a caller with `role` on a resource of `kind` may change it: the role holds the kind's write
 * permission, and the caller did not come with a read-only API key. This also decides who is shown the
 * resource's secrets (README, "Secrets by role"): those who may write them, and no one else.
 */
function mayWrite(caller: AuthUser, role: Role, kind: ResourceKind): boolean {
  return caller.apiKey?.scope !== 'read' && roleAtLeast(role, PERMISSIONS[WRITE_PERMISSION[kind]]);
}

/**
 * "May this caller do this on this resource?", for every route: 404 when the caller cannot see the
 * resource at all (exactly as when it does not exist), 403 when their role is too low. The grant it
 * answers also says whether the caller may write the resource (`mayWrite`), which decides secrets.
 */
@Injectable()
export class AccessService {
  constructor(private readonly access: AccessRepository) {}

  async require(caller: AuthUser, permission: Permission, kind: ResourceKind, id: string): Promise<Grant> {
    const grant = await this.access.grantOf(caller.id, kind, id);
    if (!grant) throw new NotFoundException(NOT_FOUND[kind]);
    const needed = PERMISSIONS[permission];
    if (!roleAtLeast(grant.role, needed))
      throw new ForbiddenException(
        `your role in this team is ${grant.role}; ${permission} needs ${needed} or above`,
      );
    return { ...grant, mayWrite: mayWrite(caller, grant.role, kind) };
  }

  /**
   * Whether a caller may still do what a grant let them do when it was checked: the API key they came
   * with still stands, and the permission holds on the resource. For what outlives one request (a live
   * stream), should the announcement of a revocation through Redis be lost.
   */
  async stillHolds(
    caller: AuthUser,
    permission: Permission,
    kind: ResourceKind,
    id: string,
  ): Promise<boolean> {
    if (caller.apiKey && !(await this.access.apiKeyStands(caller.apiKey.id))) return false;
    const grant = await this.access.grantOf(caller.id, kind, id);
    return grant !== null && roleAtLeast(grant.role, PERMISSIONS[permission]);
  }

  /** The user's role in each of their teams, by team id. */
  teamRoles(userId: string): Promise<Map<string, Role>> {
    return this.access.teamRoles(userId);
  }
}
