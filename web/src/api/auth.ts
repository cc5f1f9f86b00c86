import type { Session, User } from '../types';
import { api } from './client';
import { endSession, saveSession, storedRefreshToken, updateUser } from './session';

/** Logging in, registering and out, and reloading the user: /api/auth, stored in the session. */

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
  const refreshToken = storedRefreshToken();
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
  updateUser(user);
  return user;
}
