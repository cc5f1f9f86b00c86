import type { Session, User } from '../types';
import { ApiError, isRecord, messagesOf, NETWORK_ERROR, readBody } from './errors';

/**
 * The session: the access token, refreshed about a minute before it expires (api() refreshes it once
 * more, then retries, when a request still gets a 401), the refresh token and the user. They live in
 * localStorage so that a reload or a second tab stays logged in. Logging in and out is in ./auth.
 */

const KEY_ACCESS = 'hooktrail.accessToken';
const KEY_REFRESH = 'hooktrail.refreshToken';
const KEY_USER = 'hooktrail.user';
/** Refresh the access token this long before its `exp`. */
const REFRESH_MARGIN_MS = 60_000;
const RETRY_REFRESH_MS = 30_000;

export type SessionChangeReason = 'login' | 'logout' | 'expired' | 'update' | 'other-tab';
type SessionListener = (user: User | null, reason: SessionChangeReason) => void;

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

/** What saveSession and updateUser store: a User (checked loosely, it is our own write). */
function isStoredUser(value: unknown): value is User {
  return isRecord(value) && typeof value.id === 'string' && typeof value.email === 'string';
}

/** The stored refresh token, null when logged out. */
export function storedRefreshToken(): string | null {
  return read(KEY_REFRESH);
}

/** Stores the session of a login or registration. */
export function saveSession(session: Session): void {
  write(KEY_ACCESS, session.accessToken);
  write(KEY_REFRESH, session.refreshToken);
  write(KEY_USER, JSON.stringify(session.user));
  scheduleRefresh();
  notify(session.user, 'login');
}

/** Stores the reloaded user, unless the session ended meanwhile. */
export function updateUser(user: User): void {
  if (read(KEY_REFRESH)) {
    write(KEY_USER, JSON.stringify(user));
    notify(user, 'update');
  }
}

export function endSession(reason: SessionChangeReason): void {
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
