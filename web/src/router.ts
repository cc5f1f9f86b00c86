import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes, so that the API server needs no fallback for client routes:
 *   #/                                   endpoints list
 *   #/login, #/signup                    auth screen in that mode (when logged out)
 *   #/endpoints/<id>[?status=&verification=&from=&q=&page=]   endpoint page, filters kept in the hash
 *   #/endpoints/<id>/events/<eventId>    event detail
 *   #/api-keys                           API keys
 *   #/issues[?status=&endpoint_id=]      issues, filters kept in the hash
 *   #/notifications                      notification channels
 *   #/teams                              the caller's teams, and a form to create one
 *   #/teams/<tid>                        one team: members, invitations, rename, leave, delete
 *   #/invitations/accept?token=<t>       accepting a team invitation (the link of the invitation mail)
 *   #/audit-log[?team_id=&endpoint_id=&page=]   the audit log, filters kept in the hash
 */
export type Route =
  | { name: 'endpoints' }
  | { name: 'login' }
  | { name: 'signup' }
  | { name: 'endpoint'; id: string; params: URLSearchParams }
  | { name: 'event'; id: string; eventId: string }
  | { name: 'api-keys' }
  | { name: 'issues'; params: URLSearchParams }
  | { name: 'notifications' }
  | { name: 'teams' }
  | { name: 'team'; id: string }
  | { name: 'invitation'; token: string }
  | { name: 'audit-log'; params: URLSearchParams }
  | { name: 'not-found' };

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  const queryAt = raw.indexOf('?');
  const path = queryAt === -1 ? raw : raw.slice(0, queryAt);
  const params = new URLSearchParams(queryAt === -1 ? '' : raw.slice(queryAt + 1));
  const parts = path.split('/').filter(Boolean).map(decode);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'endpoints')) return { name: 'endpoints' };
  if (parts.length === 1 && parts[0] === 'login') return { name: 'login' };
  if (parts.length === 1 && parts[0] === 'signup') return { name: 'signup' };
  if (parts.length === 1 && parts[0] === 'api-keys') return { name: 'api-keys' };
  if (parts.length === 1 && parts[0] === 'issues') return { name: 'issues', params };
  if (parts.length === 1 && parts[0] === 'notifications') return { name: 'notifications' };
  if (parts.length === 1 && parts[0] === 'teams') return { name: 'teams' };
  if (parts.length === 2 && parts[0] === 'teams') return { name: 'team', id: parts[1] };
  if (parts.length === 2 && parts[0] === 'invitations' && parts[1] === 'accept') {
    return { name: 'invitation', token: params.get('token') ?? '' };
  }
  if (parts.length === 1 && parts[0] === 'audit-log') return { name: 'audit-log', params };
  if (parts[0] === 'endpoints' && parts.length === 2) return { name: 'endpoint', id: parts[1], params };
  if (parts[0] === 'endpoints' && parts.length === 4 && parts[2] === 'events') {
    return { name: 'event', id: parts[1], eventId: parts[3] };
  }
  return { name: 'not-found' };
}

/**
 * The query of each endpoint's events list as last shown in this tab (its filters and page), so that a
 * link back to the list from one of its events opens it as it was left.
 */
const listQueries = new Map<string, string>();

/** Keeps the events list's query for `listOf` links (EventsList, as its filters change). */
export function rememberListQuery(endpointId: string, query: string): void {
  listQueries.set(endpointId, query);
}

export const href = {
  endpoints: () => '#/',
  endpoint: (id: string) => `#/endpoints/${encodeURIComponent(id)}`,
  /** The endpoint's page with its events list as last shown in this tab. */
  listOf: (id: string) => {
    const query = listQueries.get(id);
    return `${href.endpoint(id)}${query ? `?${query}` : ''}`;
  },
  event: (id: string, eventId: string) =>
    `#/endpoints/${encodeURIComponent(id)}/events/${encodeURIComponent(eventId)}`,
  apiKeys: () => '#/api-keys',
  issues: (query = '') => (query ? `#/issues?${query}` : '#/issues'),
  notifications: () => '#/notifications',
  teams: () => '#/teams',
  team: (id: string) => `#/teams/${encodeURIComponent(id)}`,
  auditLog: (query = '') => (query ? `#/audit-log?${query}` : '#/audit-log'),
};

export function navigate(target: string): void {
  window.location.hash = target.replace(/^#/, '');
}

/** Changes the hash without a history entry or a route change (filters of the current page). */
export function replaceHash(target: string): void {
  const url = `${window.location.pathname}${window.location.search}${target.startsWith('#') ? target : `#${target}`}`;
  window.history.replaceState(window.history.state, '', url);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseHash(window.location.hash));
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
