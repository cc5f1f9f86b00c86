import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { connectionOptions, targetPath } from '../common/request-target';
import type { CapturedEvent } from './api-client';

/** The parts of a captured event that make up the original request. */
export type CapturedRequest = Pick<CapturedEvent, 'method' | 'query' | 'headers' | 'body' | 'body_encoding'>;

export interface ForwardOutcome {
  /** The local server's status; undefined when no answer came (the error says why). */
  status?: number;
  error?: string;
  durationMs: number;
}

// Headers that describe one connection, not the request (RFC 9110 section 7.6.1), plus those that this
// connection to the local target sets itself (host, content-length).
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

/** A local server that does not answer within this time is reported as failed, and listen goes on. */
const LOCAL_TIMEOUT_MS = 30_000;

/**
 * The captured headers to send on: all but the hop-by-hop ones, including those the sender's own
 * `Connection` header named as hop-by-hop.
 */
export function forwardedHeaders(captured: Record<string, unknown>): OutgoingHttpHeaders {
  const named = connectionOptions(captured.connection);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(captured)) {
    const key = name.toLowerCase();
    if (NOT_FORWARDED.has(key) || key.startsWith('proxy-') || named.has(key)) continue;
    if (typeof value === 'string' || isStringList(value)) headers[key] = value;
  }
  return headers;
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

export function bodyBytes(event: Pick<CapturedRequest, 'body' | 'body_encoding'>): Buffer {
  return Buffer.from(event.body, event.body_encoding === 'base64' ? 'base64' : 'utf8');
}

/**
 * Sends the captured request to the local target over node:http(s), which, unlike fetch, sends the
 * headers and bytes as given. Never rejects: a failure is an outcome to print.
 */
export function forwardToLocal(
  event: CapturedRequest,
  target: URL,
  signal: AbortSignal,
): Promise<ForwardOutcome> {
  const body = bodyBytes(event);
  const headers = forwardedHeaders(event.headers);
  // A request that had a body, or said it had none, says how long it is; a bare GET stays bare.
  if (body.length > 0 || 'content-length' in event.headers) headers['content-length'] = body.length;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const fail = (error: Error) => resolve({ error: error.message, durationMs: elapsed() });
    try {
      const request = send(
        target,
        {
          method: event.method,
          path: targetPath(target, event.query),
          headers,
          signal,
          timeout: LOCAL_TIMEOUT_MS,
        },
        (response) => {
          response.resume();
          response.once('end', () => resolve({ status: response.statusCode, durationMs: elapsed() }));
          response.once('error', fail);
        },
      );
      request.once('timeout', () => request.destroy(new Error(`no answer in ${LOCAL_TIMEOUT_MS / 1000} s`)));
      request.once('error', fail);
      request.end(body);
    } catch (error) {
      // node:http refuses some header values synchronously (characters not allowed in a header).
      fail(error as Error);
    }
  });
}
