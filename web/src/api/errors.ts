/**
 * What an API answer means: its body, and the ApiError a failure becomes (a non-2xx answer, or a network
 * failure as status 0). Shared by the session's token refresh and by api().
 */

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

export function isRecord(value: unknown): value is Record<string, unknown> {
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

export function messagesOf(status: number, statusText: string, body: unknown): string[] {
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

export const NETWORK_ERROR = 'Could not reach the server. Check your connection and try again.';

/**
 * The answer's JSON (its text when it is not JSON; null when empty). A body cut off while it arrives
 * rejects like the request would have: an abort stays an AbortError, anything else is a network error.
 */
export async function readBody(response: Response): Promise<unknown> {
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
