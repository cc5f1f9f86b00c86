import { randomBytes } from 'node:crypto';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small JSON client over real HTTP (Node's fetch). */
export async function api<T = Record<string, any>>( // eslint-disable-line @typescript-eslint/no-explicit-any
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: body as T };
}

export interface RegisteredUser {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.com`;
}

export async function registerUser(baseUrl: string, email = uniqueEmail()): Promise<RegisteredUser> {
  const response = await api(baseUrl, 'POST', '/api/auth/register', {
    body: { email, name: 'Test User', password: 'correct horse battery' },
  });
  if (response.status !== 201)
    throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
  return {
    id: response.body.user.id,
    email,
    accessToken: response.body.accessToken,
    refreshToken: response.body.refreshToken,
  };
}

export interface CreatedApiKey {
  api_key: Record<string, string | null> & { id: string };
  key: string;
}

/** An API key of the user's, made as a user does: POST /api/api-keys with a signed-in session. */
export async function createApiKey(
  baseUrl: string,
  user: RegisteredUser,
  body: Record<string, unknown> = { name: 'test key' },
): Promise<CreatedApiKey> {
  const created = await api<CreatedApiKey>(baseUrl, 'POST', '/api/api-keys', {
    token: user.accessToken,
    body,
  });
  if (created.status !== 201)
    throw new Error(`create API key: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}
