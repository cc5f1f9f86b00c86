/** The methods that write: a successful call of one of them on an audited route leaves one entry. */
export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Where an entry's target id comes from: a path parameter of the route (`dId`), or, for what the call
 * created, a path into its response body (`body.destination.id`).
 */
export type TargetIdSource = string;

/** What one write route is, in the audit log. */
export interface AuditedRoute {
  /** `<resource>.created|updated|deleted`, or a verb for the other writes (`event.replayed`). */
  action: string;
  /** The kind of thing the call acted on. */
  target: string;
  id: TargetIdSource;
  /** A body field that, when true, makes the call a dry run: it only counts, writes nothing, and is not audited. */
  dryRunField?: string;
  /**
   * The call's action is a message sent, whose result is its answer: no transaction can hold it back or undo
   * it, and one open around it would hold a connection of the pool for the send's time-out. It runs outside
   * any, and its entry is stored after it.
   */
  sends?: true;
}

/** The prefix of a TargetIdSource that reads the response body rather than a path parameter. */
export const RESPONSE_BODY = 'body.';

/**
 * Every write route of the API, keyed by method and Fastify route template (`request.routeOptions.url`).
 * The one place that says what a write is called in the audit log: a new route goes here or in
 * NOT_AUDITED, or test/audit-log.e2e-spec.ts fails.
 */
export const AUDITED_ROUTES: Readonly<Record<string, AuditedRoute>> = {
  'POST /api/endpoints': { action: 'endpoint.created', target: 'endpoint', id: 'body.endpoint.id' },
  'PATCH /api/endpoints/:id': { action: 'endpoint.updated', target: 'endpoint', id: 'id' },
  'DELETE /api/endpoints/:id': { action: 'endpoint.deleted', target: 'endpoint', id: 'id' },
  'POST /api/endpoints/:id/destinations': {
    action: 'destination.created',
    target: 'destination',
    id: 'body.destination.id',
  },
  'PATCH /api/endpoints/:id/destinations/:dId': {
    action: 'destination.updated',
    target: 'destination',
    id: 'dId',
  },
  'DELETE /api/endpoints/:id/destinations/:dId': {
    action: 'destination.deleted',
    target: 'destination',
    id: 'dId',
  },
  'POST /api/endpoints/:id/events/:eId/replay': { action: 'event.replayed', target: 'event', id: 'eId' },
  'POST /api/endpoints/:id/bulk-replays': {
    action: 'bulk_replay.created',
    target: 'bulk_replay',
    id: 'body.bulk_replay.id',
    dryRunField: 'dry_run',
  },
  'POST /api/endpoints/:id/bulk-replays/:rId/cancel': {
    action: 'bulk_replay.cancelled',
    target: 'bulk_replay',
    id: 'rId',
  },
  'PATCH /api/issues/:iid': { action: 'issue.updated', target: 'issue', id: 'iid' },
  'POST /api/notification-channels': {
    action: 'notification_channel.created',
    target: 'notification_channel',
    id: 'body.channel.id',
  },
  'DELETE /api/notification-channels/:cid': {
    action: 'notification_channel.deleted',
    target: 'notification_channel',
    id: 'cid',
  },
  'POST /api/notification-channels/:cid/test': {
    action: 'notification_channel.tested',
    target: 'notification_channel',
    id: 'cid',
    sends: true,
  },
  'POST /api/api-keys': { action: 'api_key.created', target: 'api_key', id: 'body.api_key.id' },
  'DELETE /api/api-keys/:kid': { action: 'api_key.revoked', target: 'api_key', id: 'kid' },
  'POST /api/teams': { action: 'team.created', target: 'team', id: 'body.team.id' },
  'PATCH /api/teams/:tid': { action: 'team.updated', target: 'team', id: 'tid' },
  'DELETE /api/teams/:tid': { action: 'team.deleted', target: 'team', id: 'tid' },
  'PATCH /api/teams/:tid/members/:uid': { action: 'member.updated', target: 'member', id: 'uid' },
  'DELETE /api/teams/:tid/members/:uid': { action: 'member.removed', target: 'member', id: 'uid' },
  'POST /api/teams/:tid/invitations': {
    action: 'invitation.created',
    target: 'invitation',
    id: 'body.invitation.id',
  },
  'DELETE /api/teams/:tid/invitations/:invid': {
    action: 'invitation.revoked',
    target: 'invitation',
    id: 'invid',
  },
  // The answer names the team joined, not the invitation: the entry points at the team.
  'POST /api/invitations/accept': { action: 'invitation.accepted', target: 'team', id: 'body.team.id' },
};

/** The write routes that are deliberately not audited, each with the reason. */
export const NOT_AUDITED: Readonly<Record<string, string>> = {
  'POST /api/auth/register':
    'creates the account itself: there is no account yet to log it in, and its body is a password',
  'POST /api/auth/login': 'opens a session; changes no data of the account',
  'POST /api/auth/refresh': 'exchanges a refresh token for an access token; changes no data of the account',
  'POST /api/auth/logout': 'ends a session (revokes its refresh token); changes no data of the account',
  'POST /api/endpoints/:id/events/:eId/filter-test':
    'tries a filter on a stored event and answers whether it matches; saves and sends nothing',
  'POST /api/endpoints/:id/events/:eId/ai/handler':
    'writes handler code for the event and answers it; saves nothing of the account',
};

/** `POST /api/endpoints/:id` → the audit table's key. */
export const routeKey = (method: string, url: string): string => `${method} ${url}`;

/** The audit table's entry for a write route, or undefined when the route is not audited. */
export function auditedRouteOf(method: string, url: string | undefined): AuditedRoute | undefined {
  if (!WRITE_METHODS.has(method) || url === undefined) return undefined;
  const key = routeKey(method, url);
  return Object.hasOwn(AUDITED_ROUTES, key) ? AUDITED_ROUTES[key] : undefined;
}
