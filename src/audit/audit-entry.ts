import type { Grant } from '../access/access.repository';
import type { AuthUser } from '../common/decorators/current-user.decorator';
import { UUID } from '../common/pipes/resource-id.pipe';
import { type AuditedRoute, RESPONSE_BODY, type TargetIdSource } from './audit-actions';
import { changesOf } from './audit-changes';

export const ACTOR_TYPES = ['user', 'api_key'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** One row of the audit log, as written. */
export interface NewAuditEntry {
  actorType: ActorType;
  /** The user's id, or the API key's. */
  actorId: string;
  actorUserId: string;
  actorEmail: string;
  action: string;
  targetType: string;
  targetId: string | null;
  /** The caller, when the entry belongs to their own account (no team). */
  accountUserId: string | null;
  teamId: string | null;
  endpointId: string | null;
  ip: string | null;
  changes: Record<string, unknown>;
}

/**
 * What the audit reads of a Fastify request that went through the access guard. `ip` and `routeOptions`
 * are getters of Fastify's request prototype: a copy of the request (`{...request}`) has neither.
 */
export interface AuditedRequest {
  method: string;
  ip?: string;
  params?: Record<string, string | undefined>;
  body?: unknown;
  user?: AuthUser;
  /** Left by the access guard on routes marked @Can. */
  grant?: Grant;
  routeOptions?: { url?: string };
}

/** The value at a dotted path of a JSON value (`destination.id`), or undefined. */
function valueAt(root: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (value, key) =>
        typeof value === 'object' && value !== null && Object.hasOwn(value, key)
          ? (value as Record<string, unknown>)[key]
          : undefined,
      root,
    );
}

/** A string id as the API shows it (UUIDs in lower case, as the ResourceIdPipe passes them on), or null. */
function idOf(value: unknown): string | null {
  if (typeof value !== 'string' || value === '') return null;
  return UUID.test(value) ? value.toLowerCase() : value;
}

function targetIdOf(source: TargetIdSource, request: AuditedRequest, response: unknown): string | null {
  return source.startsWith(RESPONSE_BODY)
    ? idOf(valueAt(response, source.slice(RESPONSE_BODY.length)))
    : idOf(request.params?.[source]);
}

/**
 * The team and endpoint an entry belongs to: the grant the access guard found for the route's resource;
 * without one (routes that create, such as POST /api/endpoints or /api/teams), the resource the answer
 * shows: an endpoint with its `team_id`, or a team. Neither: the caller's own account.
 */
function placeOf(
  request: AuditedRequest,
  response: unknown,
): { teamId: string | null; endpointId: string | null } {
  if (request.grant) return { teamId: request.grant.teamId, endpointId: request.grant.endpointId };
  const endpoint = valueAt(response, 'endpoint');
  if (endpoint !== undefined)
    return { teamId: idOf(valueAt(endpoint, 'team_id')), endpointId: idOf(valueAt(endpoint, 'id')) };
  return { teamId: idOf(valueAt(response, 'team.id')), endpointId: null };
}

/**
 * The entry one successful write leaves: who did what to which, where from, with the body they sent
 * (`{}` for a route that takes no body, whatever came with the call).
 */
export function auditEntryOf(
  route: AuditedRoute,
  request: AuditedRequest,
  user: AuthUser,
  response: unknown,
  takesBody: boolean,
): NewAuditEntry {
  const place = placeOf(request, response);
  return {
    actorType: user.apiKey ? 'api_key' : 'user',
    actorId: user.apiKey?.id ?? user.id,
    actorUserId: user.id,
    actorEmail: user.email,
    action: route.action,
    targetType: route.target,
    targetId: targetIdOf(route.id, request, response),
    accountUserId: place.teamId === null ? user.id : null,
    teamId: place.teamId,
    endpointId: place.endpointId,
    ip: request.ip ?? null,
    changes: takesBody ? changesOf(request.body) : {},
  };
}

/** Whether the call was a dry run of its route (it only counted, and wrote nothing). */
export function isDryRun(route: AuditedRoute, request: AuditedRequest): boolean {
  return route.dryRunField !== undefined && valueAt(request.body, route.dryRunField) === true;
}
