import { ApiError, isAbortError, messagesOf, NETWORK_ERROR, readBody } from './errors';
import { endSession, getAccessToken, refreshAccessToken } from './session';

/**
 * The API client: same-origin JSON requests with the session's access token, refreshed once more, then
 * retried, when a request still gets a 401.
 */

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
