import type {
  ApiKey,
  ApiKeyInput,
  AuditPage,
  ChannelTestResult,
  CreatedApiKey,
  CreatedNotificationChannel,
  Endpoint,
  EndpointSettings,
  EndpointStats,
  EventRoute,
  FilterRule,
  FilterVerdict,
  IngestRulesInput,
  Invitation,
  InvitationInput,
  Issue,
  IssueWithDiagnosis,
  NotificationChannel,
  NotificationChannelInput,
  Role,
  Session,
  StatsWindow,
  Team,
  TeamMember,
  User,
} from './types';

/**
 * The API client: same-origin JSON requests with the access token, refreshed about a minute before
 * it expires (and once more, then retried, when a request still gets a 401). Tokens live in
 * localStorage so that a reload or a second tab stays logged in.
 */

const KEY_ACCESS = 'hooktrail.accessToken';
const KEY_REFRESH = 'hooktrail.refreshToken';
const KEY_USER = 'hooktrail.user';
/** Refresh the access token this long before its `exp`. */
const REFRESH_MARGIN_MS = 60_000;
const RETRY_REFRESH_MS = 30_000;

export type SessionChangeReason = 'login' | 'logout' | 'expired' | 'update' | 'other-tab';
type SessionListener = (user: User | null, reason: SessionChangeReason) => void;

/** An API answer that is not 2xx, or a network failure (status 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly body: unknown;
  /** Every message of the answer (Nest validation sends several). */
  readonly messages: string[];

  constructor(status: number, messages: string[], body: unknown) {
    super(messages.join('; '));
    this.name = 'ApiError';
    this.status = status;
    this.messages = messages;
    this.body = body;
  }

  /** 403 with `upgrade_required: true`: the feature needs a higher plan. */
  get upgradeRequired(): boolean {
    return isRecord(this.body) && this.body.upgrade_required === true;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/** The messages to show for any thrown value. */
export function errorMessages(error: unknown): string[] {
  if (error instanceof ApiError) return error.messages;
  if (error instanceof Error) return [error.message];
  return ['Something went wrong.'];
}

function messagesOf(status: number, statusText: string, body: unknown): string[] {
  if (isRecord(body)) {
    const { message, error } = body;
    if (Array.isArray(message)) {
      const texts = message.filter((m): m is string => typeof m === 'string');
      if (texts.length > 0) return texts;
    }
    if (typeof message === 'string' && message) return [message];
    if (typeof error === 'string' && error) return [error];
  }
  if (typeof body === 'string' && body.trim() && body.length < 300) return [body.trim()];
  if (status === 429) return ['Too many attempts. Wait a minute and try again.'];
  if (status >= 500) return [`The server had a problem (${status}). Try again in a moment.`];
  return [`Request failed: ${status} ${statusText}`.trim()];
}

const NETWORK_ERROR = 'Could not reach the server. Check your connection and try again.';

/* ---------- storage ---------- */

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Storage unavailable (private mode quota): the session lasts as long as the page.
  }
}

const listeners = new Set<SessionListener>();

export function onSessionChange(listener: SessionListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function notify(user: User | null, reason: SessionChangeReason): void {
  for (const listener of listeners) listener(user, reason);
}

/** The stored user, when there is a session to go with it. */
export function currentUser(): User | null {
  if (!read(KEY_REFRESH)) return null;
  const raw = read(KEY_USER);
  if (!raw) return null;
  try {
    const user = JSON.parse(raw) as unknown;
    if (isStoredUser(user)) return user;
  } catch {
    // fall through
  }
  return null;
}

/** What saveSession and fetchMe store: a User (checked loosely, it is our own write). */
function isStoredUser(value: unknown): value is User {
  return isRecord(value) && typeof value.id === 'string' && typeof value.email === 'string';
}

function saveSession(session: Session): void {
  write(KEY_ACCESS, session.accessToken);
  write(KEY_REFRESH, session.refreshToken);
  write(KEY_USER, JSON.stringify(session.user));
  scheduleRefresh();
  notify(session.user, 'login');
}

function endSession(reason: SessionChangeReason): void {
  const hadSession = read(KEY_REFRESH) !== null;
  write(KEY_ACCESS, null);
  write(KEY_REFRESH, null);
  write(KEY_USER, null);
  if (refreshTimer !== undefined) clearTimeout(refreshTimer);
  refreshTimer = undefined;
  if (hadSession || reason === 'logout') notify(null, reason);
}

/* ---------- access token ---------- */

/** `exp` of a JWT in milliseconds, or null when it cannot be read. */
export function tokenExpiry(token: string): number | null {
  const part = token.split('.')[1];
  if (!part) return null;
  try {
    const base64 = part
      .replace(/-/g, '+')
      .replace(/_/g, '/')
      .padEnd(Math.ceil(part.length / 4) * 4, '=');
    const payload = JSON.parse(atob(base64)) as unknown;
    if (isRecord(payload) && typeof payload.exp === 'number') return payload.exp * 1000;
  } catch {
    // not a JWT we can read
  }
  return null;
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
let refreshInFlight: Promise<string | null> | null = null;

/** Arms a timer that refreshes the access token REFRESH_MARGIN_MS before it expires. */
function scheduleRefresh(delayOverride?: number): void {
  if (refreshTimer !== undefined) clearTimeout(refreshTimer);
  refreshTimer = undefined;
  const token = read(KEY_ACCESS);
  if (!read(KEY_REFRESH)) return;
  const expiry = token ? tokenExpiry(token) : null;
  const delay = delayOverride ?? (expiry === null ? 0 : Math.max(0, expiry - Date.now() - REFRESH_MARGIN_MS));
  // Timers beyond ~24 days overflow; tokens live 15 minutes, so clamp defensively.
  refreshTimer = setTimeout(
    () => {
      refreshTimer = undefined;
      refreshAccessToken().catch(() => scheduleRefresh(RETRY_REFRESH_MS));
    },
    Math.min(delay, 2 ** 31 - 1),
  );
}

/**
 * Exchanges the refresh token for a new access token. Resolves null (and ends the session) when the
 * refresh token is refused; rejects with an ApiError on a network or server failure (session kept).
 * Concurrent callers share one request.
 */
export function refreshAccessToken(): Promise<string | null> {
  refreshInFlight ??= doRefresh().finally(() => {
    refreshInFlight = null;
  });
  return refreshInFlight;
}

async function doRefresh(): Promise<string | null> {
  const refreshToken = read(KEY_REFRESH);
  if (!refreshToken) {
    endSession('expired');
    return null;
  }
  let response: Response;
  try {
    response = await fetch('/api/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ refreshToken }),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, [NETWORK_ERROR], null);
  }
  const body = await readBody(response);
  if (response.ok && isRecord(body) && typeof body.accessToken === 'string') {
    // Another tab may have logged out meanwhile.
    if (read(KEY_REFRESH) !== refreshToken) return read(KEY_ACCESS);
    write(KEY_ACCESS, body.accessToken);
    scheduleRefresh();
    return body.accessToken;
  }
  if (
    response.status === 400 ||
    response.status === 401 ||
    response.status === 403 ||
    response.status === 404
  ) {
    endSession('expired');
    return null;
  }
  throw new ApiError(response.status, messagesOf(response.status, response.statusText, body), body);
}

/** A usable access token: refreshed first when it expires within the margin. Null when logged out. */
export async function getAccessToken(): Promise<string | null> {
  if (!read(KEY_REFRESH)) return null;
  const token = read(KEY_ACCESS);
  const expiry = token ? tokenExpiry(token) : null;
  if (token && (expiry === null || expiry - Date.now() > REFRESH_MARGIN_MS)) return token;
  try {
    return await refreshAccessToken();
  } catch (error) {
    // Refresh failed for a transient reason: the current token may still be good for a while.
    if (token && expiry !== null && expiry > Date.now()) return token;
    throw error;
  }
}

/* ---------- requests ---------- */

/**
 * The answer's JSON (its text when it is not JSON; null when empty). A body cut off while it arrives
 * rejects like the request would have: an abort stays an AbortError, anything else is a network error.
 */
async function readBody(response: Response): Promise<unknown> {
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    if (isAbortError(error)) throw error;
    throw new ApiError(0, [NETWORK_ERROR], null);
  }
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
  /** Send the access token (default true). */
  auth?: boolean;
}

/** Calls the API and returns its JSON answer; throws ApiError for non-2xx answers. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const auth = options.auth !== false;
  const send = async (token: string | null): Promise<Response> => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    try {
      return await fetch(path, {
        method: options.method ?? 'GET',
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: options.signal,
        cache: 'no-store',
      });
    } catch (error) {
      if (isAbortError(error)) throw error;
      throw new ApiError(0, [NETWORK_ERROR], null);
    }
  };

  let token: string | null = null;
  if (auth) {
    token = await getAccessToken();
    if (!token) throw new ApiError(401, ['Please log in again.'], null);
  }
  let response = await send(token);
  if (auth && response.status === 401) {
    token = await refreshAccessToken();
    if (!token) throw new ApiError(401, ['Your session has expired. Please log in again.'], null);
    response = await send(token);
    if (response.status === 401) endSession('expired');
  }
  const body = await readBody(response);
  if (!response.ok)
    throw new ApiError(response.status, messagesOf(response.status, response.statusText, body), body);
  return body as T;
}

/** `/api/endpoints/<id>...` with every id segment encoded. */
export function endpointPath(endpointId: string, ...rest: string[]): string {
  return ['/api/endpoints', endpointId, ...rest]
    .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
    .join('/');
}

/* ---------- auth ---------- */

export async function login(email: string, password: string): Promise<User> {
  const session = await api<Session>('/api/auth/login', {
    method: 'POST',
    body: { email, password },
    auth: false,
  });
  saveSession(session);
  return session.user;
}

export async function register(email: string, name: string, password: string): Promise<User> {
  const session = await api<Session>('/api/auth/register', {
    method: 'POST',
    body: { email, name, password },
    auth: false,
  });
  saveSession(session);
  return session.user;
}

/** Revokes the refresh token on the server (best effort) and clears the stored session. */
export async function logout(): Promise<void> {
  const refreshToken = read(KEY_REFRESH);
  try {
    if (refreshToken)
      await api<{ ok: boolean }>('/api/auth/logout', { method: 'POST', body: { refreshToken } });
  } catch {
    // Logging out locally is what matters to the user.
  } finally {
    endSession('logout');
  }
}

/** Reloads the user (the plan may have changed) and stores it. */
export async function fetchMe(): Promise<User> {
  const { user } = await api<{ user: User }>('/api/auth/me');
  if (read(KEY_REFRESH)) {
    write(KEY_USER, JSON.stringify(user));
    notify(user, 'update');
  }
  return user;
}

/** Starts the refresh timer for a stored session and follows logins and logouts made in other tabs. */
export function startSession(): void {
  if (read(KEY_REFRESH)) scheduleRefresh();
  window.addEventListener('storage', (event) => {
    if (event.key !== null && event.key !== KEY_REFRESH && event.key !== KEY_USER) return;
    const user = currentUser();
    if (user) scheduleRefresh();
    else if (refreshTimer !== undefined) clearTimeout(refreshTimer);
    notify(user, 'other-tab');
  });
  // Background tabs throttle timers: check the token as soon as the page is visible again.
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && read(KEY_REFRESH)) getAccessToken().catch(() => undefined);
  });
}

/* ---------- ingest rules and routing ---------- */

/** Sets the ingest rules given (null removes one); answers the endpoint, its rule secrets masked. */
export async function updateIngestRules(endpointId: string, rules: IngestRulesInput): Promise<Endpoint> {
  const { endpoint } = await api<{ endpoint: Endpoint }>(endpointPath(endpointId), {
    method: 'PATCH',
    body: rules,
  });
  return endpoint;
}

/** Which of the endpoint's destinations would get the event were it captured now, and why not. */
export async function eventRouting(
  endpointId: string,
  eventId: string,
  signal?: AbortSignal,
): Promise<EventRoute[]> {
  const { destinations } = await api<{ destinations: EventRoute[] }>(
    endpointPath(endpointId, 'events', eventId, 'routing'),
    { signal },
  );
  return destinations;
}

/** Tries a destination filter (null: none) on the event; nothing is saved. A bad rule is a 400. */
export function testFilter(
  endpointId: string,
  eventId: string,
  filter: FilterRule | null,
): Promise<FilterVerdict> {
  return api<FilterVerdict>(endpointPath(endpointId, 'events', eventId, 'filter-test'), {
    method: 'POST',
    body: { filter },
  });
}

/* ---------- API keys ---------- */

/** The user's API keys, newest first (never the keys themselves). */
export async function listApiKeys(signal?: AbortSignal): Promise<ApiKey[]> {
  const { api_keys } = await api<{ api_keys: ApiKey[] }>('/api/api-keys', { signal });
  return api_keys;
}

/** Creates an API key: the answer holds the key itself, which the API never shows again. */
export function createApiKey(input: ApiKeyInput): Promise<CreatedApiKey> {
  return api<CreatedApiKey>('/api/api-keys', { method: 'POST', body: input });
}

/** Revokes an API key: requests made with it are refused (401) at once. */
export async function revokeApiKey(id: string): Promise<void> {
  await api<{ ok: boolean }>(`/api/api-keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/* ---------- issues ---------- */

/** The user's issues, the most recently failing first; `query` is the API's (status, endpoint_id). */
export async function listIssues(query: string, signal?: AbortSignal): Promise<Issue[]> {
  const { issues } = await api<{ issues: Issue[] }>(`/api/issues${query ? `?${query}` : ''}`, { signal });
  return issues;
}

/** One issue, with the AI's diagnosis of its latest failure on the Starter plan and above. */
export async function getIssue(id: string, signal?: AbortSignal): Promise<IssueWithDiagnosis> {
  const { issue } = await api<{ issue: IssueWithDiagnosis }>(`/api/issues/${encodeURIComponent(id)}`, {
    signal,
  });
  return issue;
}

export async function setIssueStatus(id: string, status: Issue['status']): Promise<Issue> {
  const { issue } = await api<{ issue: Issue }>(`/api/issues/${encodeURIComponent(id)}`, {
    method: 'PATCH',
    body: { status },
  });
  return issue;
}

/* ---------- notification channels ---------- */

export async function listChannels(signal?: AbortSignal): Promise<NotificationChannel[]> {
  const { channels } = await api<{ channels: NotificationChannel[] }>('/api/notification-channels', {
    signal,
  });
  return channels;
}

/** Creates a channel; a webhook channel's answer holds its signing secret, shown this once. */
export function createChannel(input: NotificationChannelInput): Promise<CreatedNotificationChannel> {
  return api<CreatedNotificationChannel>('/api/notification-channels', { method: 'POST', body: input });
}

export async function deleteChannel(id: string): Promise<void> {
  await api<{ ok: boolean }>(`/api/notification-channels/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** Sends a test message through the channel now; the answer says whether it went through. */
export function testChannel(id: string): Promise<ChannelTestResult> {
  return api<ChannelTestResult>(`/api/notification-channels/${encodeURIComponent(id)}/test`, {
    method: 'POST',
  });
}

/* ---------- statistics ---------- */

/** The endpoint's events per bucket and its destinations' attempts over the window. */
export function endpointStats(
  endpointId: string,
  window: StatsWindow,
  signal?: AbortSignal,
): Promise<EndpointStats> {
  return api<EndpointStats>(`${endpointPath(endpointId, 'stats')}?window=${window}`, { signal });
}

/* ---------- teams ---------- */

/** `/api/teams/<tid>...` with every id segment encoded. */
function teamPath(teamId: string, ...rest: string[]): string {
  return ['/api/teams', teamId, ...rest]
    .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
    .join('/');
}

/** The caller's teams, each with the caller's role in it. */
export async function listTeams(signal?: AbortSignal): Promise<Team[]> {
  const { teams } = await api<{ teams: Team[] }>('/api/teams', { signal });
  return teams;
}

/** Creates a team, the caller its owner. Below the team plan: 403 with `upgrade_required`. */
export async function createTeam(name: string): Promise<Team> {
  const { team } = await api<{ team: Team }>('/api/teams', { method: 'POST', body: { name } });
  return team;
}

export async function getTeam(teamId: string, signal?: AbortSignal): Promise<Team> {
  const { team } = await api<{ team: Team }>(teamPath(teamId), { signal });
  return team;
}

export async function renameTeam(teamId: string, name: string): Promise<Team> {
  const { team } = await api<{ team: Team }>(teamPath(teamId), { method: 'PATCH', body: { name } });
  return team;
}

/** Deletes the team (owners only); 409 while it still has endpoints. */
export async function deleteTeam(teamId: string): Promise<void> {
  await api<{ ok: boolean }>(teamPath(teamId), { method: 'DELETE' });
}

export async function listMembers(teamId: string, signal?: AbortSignal): Promise<TeamMember[]> {
  const { members } = await api<{ members: TeamMember[] }>(teamPath(teamId, 'members'), { signal });
  return members;
}

/** Gives a member another role; the team keeps at least one owner (409). */
export async function setMemberRole(teamId: string, userId: string, role: Role): Promise<void> {
  await api<unknown>(teamPath(teamId, 'members', userId), { method: 'PATCH', body: { role } });
}

/** Removes a member at once; the caller's own id is leaving the team. */
export async function removeMember(teamId: string, userId: string): Promise<void> {
  await api<unknown>(teamPath(teamId, 'members', userId), { method: 'DELETE' });
}

/** The team's invitations not accepted, revoked or expired yet. */
export async function listInvitations(teamId: string, signal?: AbortSignal): Promise<Invitation[]> {
  const { invitations } = await api<{ invitations: Invitation[] }>(teamPath(teamId, 'invitations'), {
    signal,
  });
  return invitations;
}

/** Mails the address a single-use link to join the team with the role (valid 7 days). */
export async function inviteMember(teamId: string, input: InvitationInput): Promise<Invitation> {
  const { invitation } = await api<{ invitation: Invitation }>(teamPath(teamId, 'invitations'), {
    method: 'POST',
    body: input,
  });
  return invitation;
}

export async function revokeInvitation(teamId: string, invitationId: string): Promise<void> {
  await api<{ ok: boolean }>(teamPath(teamId, 'invitations', invitationId), { method: 'DELETE' });
}

/**
 * Accepts the invitation of the mail's link as the logged-in user: 400 when the token is unknown, used or
 * expired, 403 when it was sent to another address, 409 when the caller is a member already.
 */
export async function acceptInvitation(token: string): Promise<Team> {
  const { team } = await api<{ team: Team }>('/api/invitations/accept', { method: 'POST', body: { token } });
  return team;
}

/* ---------- endpoints ---------- */

/** The caller's endpoints: personal ones and those of every team, each with the caller's role on it. */
export async function listEndpoints(signal?: AbortSignal): Promise<Endpoint[]> {
  const { endpoints } = await api<{ endpoints: Endpoint[] }>('/api/endpoints', { signal });
  return endpoints;
}

/** Creates an endpoint: the caller's own, or in a team where the caller is a member or above. */
export async function createEndpoint(name: string, teamId: string | null): Promise<Endpoint> {
  const { endpoint } = await api<{ endpoint: Endpoint }>('/api/endpoints', {
    method: 'POST',
    body: teamId ? { name, team_id: teamId } : { name },
  });
  return endpoint;
}

export async function updateEndpoint(endpointId: string, changes: EndpointSettings): Promise<Endpoint> {
  const { endpoint } = await api<{ endpoint: Endpoint }>(endpointPath(endpointId), {
    method: 'PATCH',
    body: changes,
  });
  return endpoint;
}

/* ---------- audit log ---------- */

/**
 * Audit log entries, newest first; `query` is the API's (team_id, endpoint_id, page, limit). Without a
 * team or endpoint: the caller's personal account; a team's needs its admin.
 */
export function listAuditLog(query: string, signal?: AbortSignal): Promise<AuditPage> {
  return api<AuditPage>(`/api/audit-log?${query}`, { signal });
}
