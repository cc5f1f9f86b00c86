import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiExtension, ApiForbiddenResponse } from '@nestjs/swagger';
import type { ResourceKind } from './access.repository';
import { type Permission, PERMISSIONS } from './roles';

export const ROUTE_ACCESS = 'hooktrail:access';

/** What a route asks of its caller: `permission` on the resource of kind `kind` named by path `param`. */
export interface RouteAccess {
  permission: Permission;
  kind: ResourceKind;
  param: string;
}

/**
 * Marks a route (or a controller) as acting on one resource named in its path: the access guard answers
 * 404 unless the caller can see it, and 403 when their role is below the permission's. The permission
 * and role are published in the OpenAPI document (`x-access`), where the generated role walk reads them.
 */
export const Can = (permission: Permission, kind: ResourceKind, param = 'id') => {
  const role = PERMISSIONS[permission];
  const decorators = [
    SetMetadata(ROUTE_ACCESS, { permission, kind, param } satisfies RouteAccess),
    ApiExtension('x-access', { permission, role, resource: kind, param }),
  ];
  if (role !== 'viewer' && role !== 'owner')
    decorators.push(ApiForbiddenResponse({ description: `Your role in the team is below ${role}` }));
  return applyDecorators(...decorators);
};
