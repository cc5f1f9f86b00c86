import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Agent as HttpAgent, type IncomingMessage, request as httpRequest, STATUS_CODES } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent';
import type { Environment } from '../config/environment';

/** The part of a destination's response body that is kept. */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;

/** Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), and our own, which we set. */
const DROPPED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'te',
  'upgrade',
  'trailer',
]);
const isDropped = (name: string) =>
  DROPPED_HEADERS.has(name) || name.startsWith('proxy-') || name.startsWith('hooktrail-');

export interface OutgoingRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** What kind of failure an attempt was (an issue groups a destination's failures of one kind). */
export const FAILURE_KINDS = [
  'http_4xx',
  'http_5xx',
  'timeout',
  'connection',
  'tls',
  'dns',
  'refused_address',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

export interface AttemptOutcome {
  responseCode: number | null;
  responseBody: string | null;
  durationMs: number;
  error: string | null;
  /** null when the attempt succeeded (2xx), or was no attempt at all (a delivery closed without sending). */
  failureKind: FailureKind | null;
}

/** The keep-alive agents the sender dials through, one per scheme. */
export interface HttpAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

export const HTTP_AGENTS = Symbol('HTTP_AGENTS');

/**
 * The longest an idle kept-alive socket is kept. Setting it is also what makes Node's agent honour a
 * destination's `Keep-Alive: timeout=N` (closing the socket a second before the server would): with no
 * agent time-out, Node ignores that hint, and an attempt written on a socket the destination is closing
 * fails with a reset the destination never saw: a failed attempt, and a retry, for nothing.
 */
export const IDLE_SOCKET_TIMEOUT_MS = 30_000;

/** Keep-alive agents; unless private networks are allowed, they refuse to dial them. */
export function createHttpAgents(allowPrivateNetworks: boolean): HttpAgents {
  // As many idle sockets kept as may be busy: a burst of the worker's concurrent attempts would otherwise
  // close the surplus after each wave and pay a new TLS handshake for each in the next.
  const agentOptions = {
    keepAlive: true,
    maxSockets: 256,
    maxFreeSockets: 256,
    timeout: IDLE_SOCKET_TIMEOUT_MS,
  };
  const filter = { allowPrivateIPAddress: false, allowMetaIPAddress: false };
  return allowPrivateNetworks
    ? { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) }
    : {
        http: new RequestFilteringHttpAgent({ ...agentOptions, ...filter }),
        https: new RequestFilteringHttpsAgent({ ...agentOptions, ...filter }),
      };
}

/** The original URL's query string appended to the destination URL. */
export function destinationUrlWithQuery(destinationUrl: string, query: string): string {
  if (!query) return destinationUrl;
  const url = new URL(destinationUrl);
  url.search = url.search ? `${url.search.slice(1)}&${query}` : query;
  return url.toString();
}

export function forwardedHeaders(
  original: Record<string, string | string[]>,
): Record<string, string | string[]> {
  return Object.fromEntries(Object.entries(original).filter(([name]) => !isDropped(name.toLowerCase())));
}

/** A request whose response head did not arrive within the time-out. */
class RequestTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';

  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
  }
}

/** request-filtering-agent refuses private ranges as "private" and 0.0.0.0 / :: as "meta" addresses. */
const REFUSED_ADDRESS = /is not allowed\. Because, It is (private|meta) IP address/;
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
/** OpenSSL's certificate verification codes, Node's TLS errors, and a handshake cut by a protocol error. */
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

/** The kind of a request that got no response: anything not named otherwise is a connection failure. */
function errorKind(error: unknown): FailureKind {
  const { code = '', message = '' } = error as { code?: string; message?: string };
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (REFUSED_ADDRESS.test(message)) return 'refused_address';
  if (DNS_CODES.has(code)) return 'dns';
  if (TLS_CODE.test(code) || (code === 'EPROTO' && /SSL|TLS/i.test(message))) return 'tls';
  return 'connection';
}

/** The kind of a response that is not a 2xx: a 5xx is the destination's fault; the rest (3xx, 4xx) a refusal. */
function responseKind(status: number): FailureKind | null {
  if (status >= 200 && status < 300) return null;
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

/** A failed attempt in words, for its issue: the HTTP status with its name, or what went wrong. */
export function failureSummary(outcome: Pick<AttemptOutcome, 'responseCode' | 'error'>): string {
  if (outcome.responseCode === null) return outcome.error ?? 'request failed';
  const name = STATUS_CODES[outcome.responseCode];
  const status = `HTTP ${outcome.responseCode}${name ? ` ${name}` : ''}`;
  return outcome.error ? `${status}: ${outcome.error}` : status;
}

function describeError(error: unknown, timeoutMs: number): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code && TIMEOUT_CODES.has(code)) return `timed out after ${timeoutMs} ms`;
  if (message && REFUSED_ADDRESS.test(message)) {
    return `refused: the destination resolves to a private or reserved address (${message.split('(')[0].replace('DNS lookup ', '').trim()}); set DELIVERY_ALLOW_PRIVATE_NETWORKS=true to allow it`;
  }
  return code ? `${code}: ${message ?? ''}`.trim() : (message ?? 'request failed');
}

/** Reads at most `limit` bytes of a response stream before `deadline`, then lets go of the stream. */
async function readHead(stream: Readable, limit: number, deadline: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      const finish = () => {
        clearTimeout(timer);
        resolve();
      };
      stream.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= limit) finish();
      });
      stream.once('end', finish);
      stream.once('error', finish);
    });
  } finally {
    stream.destroy();
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

/**
 * The response body as its sender meant it: decompressed when its `content-encoding` says gzip, deflate
 * or br (a decoding error ends the stream like a cut connection).
 */
function decodedBody(response: IncomingMessage): Readable {
  const encoding = response.headers['content-encoding']?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate'
      ? createUnzip()
      : encoding === 'br'
        ? createBrotliDecompress()
        : null;
  if (!decoder) return response;
  return pipeline(response, decoder, () => undefined);
}

/**
 * Sends one attempt with Node's own client, straight on the keep-alive agents: no redirects followed, no
 * proxy, the original headers as they are (Node adds Content-Length for the body). Never throws: every
 * failure becomes an outcome with its error.
 */
@Injectable()
export class DeliverySender implements OnModuleDestroy {
  private readonly timeoutMs: number;

  constructor(
    @Inject(HTTP_AGENTS) private readonly agents: HttpAgents,
    config: ConfigService<Environment, true>,
  ) {
    this.timeoutMs = config.get('DELIVERY_TIMEOUT_MS', { infer: true });
  }

  async send(request: OutgoingRequest): Promise<AttemptOutcome> {
    const started = Date.now();
    const deadline = started + this.timeoutMs;
    let response: IncomingMessage;
    try {
      response = await this.request(request);
    } catch (error) {
      return {
        responseCode: null,
        responseBody: null,
        durationMs: Date.now() - started,
        error: describeError(error, this.timeoutMs),
        failureKind: errorKind(error),
      };
    }
    const status = response.statusCode ?? 0;
    const bodyless = request.method === 'HEAD' || status === 204 || status === 304;
    const head = await readHead(
      bodyless ? response : decodedBody(response),
      RESPONSE_BODY_LIMIT_BYTES,
      deadline,
    );
    const ok = status >= 200 && status < 300;
    return {
      responseCode: status,
      responseBody: head.toString('utf8').replaceAll('\u0000', '\uFFFD'), // PostgreSQL text holds no NUL
      durationMs: Date.now() - started,
      error: ok ? null : status >= 300 && status < 400 ? 'redirects are not followed' : null,
      failureKind: responseKind(status),
    };
  }

  /**
   * Resolves with the response once its head has arrived, within the time-out: a plain timer destroys the
   * request when it fires (an `AbortSignal` per request and the listeners Node adds for it took 4–6 % of
   * the delivery thread's profile in a drain).
   */
  private request(outgoing: OutgoingRequest): Promise<IncomingMessage> {
    const url = new URL(outgoing.url);
    const secure = url.protocol === 'https:';
    return new Promise((resolve, reject) => {
      const sent = (secure ? httpsRequest : httpRequest)(
        url,
        {
          method: outgoing.method,
          headers: outgoing.headers,
          agent: secure ? this.agents.https : this.agents.http,
        },
        (response) => {
          clearTimeout(timer);
          resolve(response);
        },
      );
      const timer = setTimeout(() => sent.destroy(new RequestTimeoutError(this.timeoutMs)), this.timeoutMs);
      sent.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      sent.end(outgoing.body.length > 0 ? outgoing.body : undefined);
    });
  }

  onModuleDestroy(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
