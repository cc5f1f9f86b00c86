import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { type IncomingHttpHeaders, STATUS_CODES } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, Readable } from 'node:stream';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import type { Dispatcher } from 'undici';
import Agent from 'undici/lib/dispatcher/agent.js';
import buildConnector from 'undici/lib/core/connect.js';
import { isPrivateAddress } from '../common/network/private-address';
import { connectionOptions, targetPath } from '../common/request-target';
import type { Environment } from '../config/environment';

/** The part of a destination's response body that is kept. */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;

/**
 * Headers that describe one hop, never forwarded (RFC 9110 §7.6.1), and our own, which we set. `Expect`
 * too: the sender writes the body with the head and never waits for a `100 Continue` (the provider's
 * client asked that of Hooktrail, not of the destination).
 */
const DROPPED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'te',
  'upgrade',
  'trailer',
  'expect',
]);
const isDropped = (name: string) =>
  DROPPED_HEADERS.has(name) || name.startsWith('proxy-') || name.startsWith('hooktrail-');

export interface OutgoingRequest {
  method: string;
  url: string;
  /** The captured query string, appended to the URL's own as it came (`targetPath`); absent: none. */
  query?: string;
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

/** A request cut off, or refused, because the sender is shutting down: no attempt was made. */
export class ShutDownError extends Error {
  constructor() {
    super('the sender shut down before the destination answered');
  }
}

/** The keep-alive connection pools the sender dials through (undici's: one pool per origin). */
export const HTTP_DISPATCHER = Symbol('HTTP_DISPATCHER');

/**
 * The longest an idle kept-alive connection is kept, and the longest a destination's `Keep-Alive:
 * timeout=N` is believed. A connection is closed a second before that hint says the destination would
 * close it: an attempt written on a connection the destination is closing fails with a reset the
 * destination never saw: a failed attempt, and a retry, for nothing.
 */
const IDLE_SOCKET_TIMEOUT_MS = 30_000;
const KEEP_ALIVE_MARGIN_MS = 1_000;
/** Connections kept to one destination at most, busy or idle (the worker's places are fewer). */
const CONNECTIONS_PER_ORIGIN = 256;

/** A connection the SSRF guard refused: the address it would dial is private or reserved. */
class RefusedAddressError extends Error {
  readonly code = 'ERR_REFUSED_ADDRESS';

  constructor(readonly address: string) {
    super(`${address} is a private or reserved address`);
  }
}

/**
 * DNS as Node resolves it for a connection, failing when any address of the name is private or reserved
 * (with `all`, Node may dial any of them): the address checked is the address dialled, so DNS rebinding
 * cannot get around the check.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (error, address: string | LookupAddress[], family?: number) => {
    if (error) return callback(error, address, family);
    const addresses = typeof address === 'string' ? [address] : address.map((each) => each.address);
    const refused = addresses.find((each) => isPrivateAddress(each));
    if (refused === undefined) return callback(null, address, family);
    callback(new RefusedAddressError(refused), address, family);
  });
};

/**
 * No time-out of undici's own on connecting (its default gives up after 10 s): the sender's timer bounds
 * the whole attempt, connection and TLS handshake included, by DELIVERY_TIMEOUT_MS, which may be longer, and
 * a connection that does not come in time is a `timeout` like any other answer that does not.
 */
const NO_CONNECT_TIMEOUT = 0;

/** Connects as undici does, refusing a literal private address (a name's addresses: `publicOnlyLookup`). */
function publicOnlyConnector(): buildConnector.connector {
  const connect = buildConnector({ lookup: publicOnlyLookup, timeout: NO_CONNECT_TIMEOUT });
  return (options, callback) => {
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIP(host) !== 0 && isPrivateAddress(host)) return callback(new RefusedAddressError(host), null);
    connect(options, callback);
  };
}

/**
 * The sender's keep-alive pools; unless private networks are allowed, they refuse to dial them. As many
 * connections are kept idle as may be busy: a burst of the worker's concurrent attempts would otherwise
 * close the surplus after each wave and pay a new TLS handshake for each in the next.
 */
export function createHttpDispatcher(allowPrivateNetworks: boolean): Dispatcher {
  return new Agent({
    connections: CONNECTIONS_PER_ORIGIN,
    keepAliveTimeout: IDLE_SOCKET_TIMEOUT_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_TIMEOUT_MS,
    keepAliveTimeoutThreshold: KEEP_ALIVE_MARGIN_MS,
    connectTimeout: NO_CONNECT_TIMEOUT,
    ...(allowPrivateNetworks ? {} : { connect: publicOnlyConnector() }),
  });
}

/**
 * The captured headers to send on: all but the hop-by-hop ones and ours, including those the provider's
 * own `Connection` header named as hop-by-hop (RFC 9110 §7.6.1).
 */
export function forwardedHeaders(
  original: Record<string, string | string[]>,
): Record<string, string | string[]> {
  const named = connectionOptions(original.connection);
  return Object.fromEntries(
    Object.entries(original).filter(([name]) => {
      const key = name.toLowerCase();
      return !isDropped(key) && !named.has(key);
    }),
  );
}

/** A request whose response head did not arrive within the time-out. */
class RequestTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';

  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
  }
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
/** OpenSSL's certificate verification codes, Node's TLS errors, and a handshake cut by a protocol error. */
const TLS_CODE =
  /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|HOSTNAME_MISMATCH)/;

/** The kind of a request that got no response: anything not named otherwise is a connection failure. */
function errorKind(error: unknown): FailureKind {
  const { code = '', message = '' } = error as { code?: string; message?: string };
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (error instanceof RefusedAddressError) return 'refused_address';
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
  if (error instanceof RefusedAddressError) {
    return `refused: the destination resolves to a private or reserved address (${error.address}); set DELIVERY_ALLOW_PRIVATE_NETWORKS=true to allow it`;
  }
  if (code === 'UND_ERR_SOCKET' && message === 'bad response') return BAD_RESPONSE;
  return code ? `${code}: ${message ?? ''}`.trim() : (message ?? 'request failed');
}

/**
 * undici's "bad response": a response head that came when no request was waiting for one, or a `100
 * Continue` the request did not ask for (it never sends `Expect`); undici closes the connection on either.
 */
const BAD_RESPONSE =
  'the destination sent a response the HTTP client does not accept: a 100 Continue that was not asked for, or a response to no request';

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

/** A destination's answer once its head has arrived; its body still streaming. */
interface DestinationResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Readable;
}

/**
 * The response body as its sender meant it: decompressed when its `content-encoding` says gzip, deflate
 * or br (a decoding error ends the stream like a cut connection).
 */
function decodedBody(response: DestinationResponse): Readable {
  const encoding = response.headers['content-encoding']?.trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' || encoding === 'deflate'
      ? createUnzip()
      : encoding === 'br'
        ? createBrotliDecompress()
        : null;
  if (!decoder) return response.body;
  return pipeline(response.body, decoder, () => undefined);
}

/** Basic credentials from a URL's user information, as Node's client sent them (RFC 7617). */
function withUserInfo(url: URL, headers: OutgoingRequest['headers']): OutgoingRequest['headers'] {
  if (!url.username && !url.password) return headers;
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization')) return headers;
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return { ...headers, authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/**
 * Sends one attempt with undici's dispatcher, straight on its keep-alive pools: no redirects followed, no
 * proxy, the original headers as they are (undici adds Content-Length for the body). Every failure becomes
 * an outcome with its error, but one: a request the sender's own shutdown cut off (or refused) before the
 * destination answered throws `ShutDownError`, since the destination did not fail.
 */
@Injectable()
export class DeliverySender implements OnModuleDestroy {
  private readonly timeoutMs: number;
  private closed = false;

  constructor(
    @Inject(HTTP_DISPATCHER) private readonly dispatcher: Dispatcher,
    config: ConfigService<Environment, true>,
  ) {
    this.timeoutMs = config.get('DELIVERY_TIMEOUT_MS', { infer: true });
  }

  async send(request: OutgoingRequest): Promise<AttemptOutcome> {
    const started = Date.now();
    const deadline = started + this.timeoutMs;
    let response: DestinationResponse;
    try {
      response = await this.request(request);
    } catch (error) {
      if (this.closed) throw new ShutDownError();
      return {
        responseCode: null,
        responseBody: null,
        durationMs: Date.now() - started,
        error: describeError(error, this.timeoutMs),
        failureKind: errorKind(error),
      };
    }
    const { status } = response;
    const bodyless = request.method === 'HEAD' || status === 204 || status === 304;
    const head = await readHead(
      bodyless ? response.body : decodedBody(response),
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
   * Resolves with the response once its final head has arrived (1xx heads are passed over), within the
   * time-out. undici's own dispatch, without an `AbortSignal` (one per request, and the listeners Node
   * adds for it, took 4–6 % of the delivery thread's profile in a drain): a plain timer aborts the request,
   * or fails it while it still waits for a connection. The body streams with backpressure, and the request
   * is aborted once the body is let go of before its end.
   */
  private request(outgoing: OutgoingRequest): Promise<DestinationResponse> {
    const url = new URL(outgoing.url);
    return new Promise((resolve, reject) => {
      let controller: Dispatcher.DispatchController | null = null;
      let body: Readable | null = null;
      let timedOut: RequestTimeoutError | null = null;
      const timer = setTimeout(() => {
        timedOut = new RequestTimeoutError(this.timeoutMs);
        controller?.abort(timedOut);
        reject(timedOut);
      }, this.timeoutMs);
      this.dispatcher.dispatch(
        {
          origin: url.origin,
          path: targetPath(url, outgoing.query ?? ''),
          method: outgoing.method,
          headers: withUserInfo(url, outgoing.headers),
          body: outgoing.body.length > 0 ? outgoing.body : null,
        },
        {
          onRequestStart(started) {
            controller = started;
            if (timedOut) started.abort(timedOut);
          },
          onResponseStart(started, status, headers) {
            if (status < 200) return;
            clearTimeout(timer);
            const stream = new Readable({ read: () => started.resume() });
            // Let go of before its end: the rest is not read (an abort after the end does nothing).
            stream.once('close', () => started.abort(new Error('response body let go of')));
            body = stream;
            resolve({ status, headers, body: stream });
          },
          onResponseData(started, chunk) {
            if (!body?.push(chunk)) started.pause();
          },
          onResponseEnd() {
            body?.push(null);
          },
          onResponseError(_started, error) {
            clearTimeout(timer);
            if (body) body.destroy(error);
            else reject(error);
          },
        },
      );
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.dispatcher.destroy();
  }
}
