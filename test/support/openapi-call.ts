import { type Operation, validBody } from './openapi-document';

export interface Answer {
  status: number;
  text: string;
}

/**
 * One call; a streaming answer is read for `streamMs` (while `during` runs), then cut off. A body is
 * sent when the operation takes one: `options.body`, else a valid one, so that only access can refuse the call.
 */
export async function callOperation(
  baseUrl: string,
  operation: Operation,
  path: string,
  token: string,
  options: { streamMs?: number; during?: () => Promise<unknown>; body?: Record<string, unknown> } = {},
): Promise<Answer> {
  const abort = new AbortController();
  const body = operation.body && JSON.stringify(options.body ?? validBody(operation.body));
  const response = await fetch(`${baseUrl}${path}`, {
    method: operation.method,
    signal: abort.signal,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body,
  });
  if (!operation.isStream || response.status !== 200)
    return { status: response.status, text: await response.text() };
  const chunks: string[] = [];
  const reader = response.body!.getReader();
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      chunks.push(Buffer.from(value).toString('utf8'));
    }
  })().catch(() => undefined);
  await options.during?.();
  await new Promise((resolve) => setTimeout(resolve, options.streamMs ?? 0));
  abort.abort();
  await reading;
  return { status: response.status, text: chunks.join('') };
}
