import proxyAddr from '@fastify/proxy-addr';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyServerFactory, FastifyServerFactoryHandler } from 'fastify';
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Environment } from '../../config/environment';
import { captureOutcomeOf, type Metrics } from '../../metrics/metrics.service';
import type { CaptureOutcome, CaptureService } from './capture.service';
import { capturedHeaders } from './captured-headers';

const CAPTURED_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);

/** `/in/<token>`, then the raw query string; anything else (a trailing slash, a deeper path) is not a capture. */
const CAPTURE_URL = /^\/in\/([^/?]+)(?:\?(.*))?$/s;

class BodyTooLargeError extends Error {}

/** Reads the body as raw bytes; rejects beyond `limit` (the rest of the body is read and dropped). */
function readBody(stream: IncomingMessage, limit: number): Promise<Buffer> {
  if (Number(stream.headers['content-length']) > limit) return Promise.reject(new BodyTooLargeError());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > limit) {
        stream.off('data', onData);
        stream.resume();
        reject(new BodyTooLargeError());
        return;
      }
      chunks.push(chunk);
    };
    stream.on('data', onData);
    stream.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)));
    stream.on('error', reject);
    stream.on('close', () => {
      if (!stream.complete) reject(new Error('the request was aborted before its body was read'));
    });
  });
}

/** Seconds a provider is asked to wait before sending again a capture that was not stored (503). */
const RETRY_AFTER_S = '5';

interface Refusal {
  statusCode: number;
  message: string;
  /** The event stored for inspection, when the refusal stored one. */
  id?: string;
  /** Seconds, for Retry-After. */
  retryAfter?: string;
  /** The WWW-Authenticate challenge of a 401 for missing credentials. */
  challenge?: string;
}

/**
 * The challenge of an endpoint with Basic inbound auth (RFC 9110 §11.6.1: a 401 sends one; RFC 7617): the
 * clients that send credentials only when challenged (Java's, .NET's, Apache HttpClient's) need it.
 */
const BASIC_CHALLENGE = 'Basic realm="hooktrail", charset="UTF-8"';

/** The HTTP answer for each outcome of a capture that was not stored. */
const REFUSALS: Record<
  Exclude<CaptureOutcome['kind'], 'stored' | 'duplicate' | 'signature-rejected'>,
  Refusal
> = {
  unauthorized: { statusCode: 401, message: 'this capture URL requires credentials (inbound auth)' },
  'unknown-endpoint': { statusCode: 404, message: 'no endpoint has this capture URL' },
  'inactive-endpoint': { statusCode: 403, message: 'endpoint is inactive' },
  'rate-limited': {
    statusCode: 429,
    message: 'too many captures for this endpoint; retry after a second',
    retryAfter: '1',
  },
  unavailable: {
    statusCode: 503,
    message: 'the event could not be stored right now; retry later',
    retryAfter: RETRY_AFTER_S,
  },
  refused: { statusCode: 500, message: 'the request could not be stored' },
};
const CLOSING: Refusal = {
  statusCode: 503,
  message: 'the service is restarting; retry later',
  retryAfter: RETRY_AFTER_S,
};

/** The token of a capture URL (percent-decoded), or undefined when the request is not a capture. */
function captureOf(request: IncomingMessage): { token: string; query: string } | undefined {
  if (!CAPTURED_METHODS.has(request.method ?? '')) return undefined;
  const match = CAPTURE_URL.exec(request.url ?? '');
  if (match === null) return undefined;
  let token = match[1];
  if (token.includes('%')) {
    try {
      token = decodeURIComponent(token);
    } catch {
      // Not a token a capture URL could have: answered as unknown.
    }
  }
  return { token, query: match[2] ?? '' };
}

/**
 * The capture URL `{SITE_URL}/in/:token`, answered on Node's HTTP server before Fastify sees the request:
 * no router, hooks, Nest pipeline, ORM unit of work or body parsing on the hot path; every other request
 * goes on to Fastify. Whatever the method or Content-Type, the body is read as raw bytes (up to
 * CAPTURE_MAX_BODY_BYTES, 413 beyond) and stored exactly as sent. Once the body is read, the answer comes
 * within CAPTURE_TIMEOUT_MS: 200 after the commit, or 503 with Retry-After (and the endpoint's ingest rules'
 * answers: 401, or 200 with `duplicate: true`). Errors answer in Nest's JSON
 * shape `{statusCode, error, message}`. While the service closes, new captures get 503 and every answer
 * says `Connection: close`, as Fastify does for its routes.
 */
export class CaptureEdge {
  private readonly logger = new Logger('CaptureRoute');
  private handler?: (request: IncomingMessage, response: ServerResponse) => boolean;
  private closing = false;

  /** Fastify's `serverFactory`: the server Fastify would create, with the capture URL answered first. */
  readonly serverFactory: FastifyServerFactory = (
    fastifyHandler: FastifyServerFactoryHandler,
    options: Record<string, unknown>,
  ): Server => {
    const server = createServer((options.http ?? {}) as object, (request, response) => {
      if (this.handler?.(request, response) !== true) fastifyHandler(request, response);
    });
    // What Fastify sets on a server it creates itself.
    server.keepAliveTimeout = options.keepAliveTimeout as number;
    server.requestTimeout = options.requestTimeout as number;
    server.setTimeout(options.connectionTimeout as number);
    const perSocket = options.maxRequestsPerSocket as number;
    if (perSocket > 0) server.maxRequestsPerSocket = perSocket;
    return server;
  };

  /** Starts answering capture URLs with `capture`, before the application listens. */
  serve(fastify: FastifyInstance, capture: CaptureService, metrics: Metrics, env: Environment): void {
    const limit = env.CAPTURE_MAX_BODY_BYTES;
    const answerWithinMs = env.CAPTURE_TIMEOUT_MS;
    // The socket's peer and the X-Forwarded-For entries of the proxies in front (as Fastify reads them).
    const trusted = (_address: string, hop: number) => hop < env.TRUST_PROXY;
    const sourceIp =
      env.TRUST_PROXY > 0
        ? (request: IncomingMessage) => proxyAddr(request, trusted)
        : (request: IncomingMessage) => request.socket.remoteAddress ?? null;
    fastify.addHook('preClose', (done) => {
      this.closing = true;
      done();
    });

    const run = async (request: IncomingMessage, response: ServerResponse, token: string, query: string) => {
      const started = performance.now();
      response.once('finish', () =>
        metrics.capture(captureOutcomeOf(response.statusCode), (performance.now() - started) / 1000),
      );
      if (this.closing) return this.refuse(response, CLOSING);
      let body: Buffer;
      try {
        body = await readBody(request, limit);
      } catch (error) {
        if (error instanceof BodyTooLargeError)
          this.refuse(response, {
            statusCode: 413,
            message: `the body is larger than the capture limit of ${limit} bytes`,
          });
        // Otherwise the request was aborted: nobody is left to answer.
        return;
      }
      const outcome = await capture.capture(
        {
          token,
          method: request.method as string,
          headers: capturedHeaders(request),
          query,
          body,
          sourceIp: sourceIp(request),
        },
        Date.now() + answerWithinMs,
      );
      switch (outcome.kind) {
        case 'stored':
          return this.send(response, 200, JSON.stringify({ id: outcome.id }));
        case 'duplicate':
          return this.send(response, 200, JSON.stringify({ id: outcome.id, duplicate: true }));
        case 'signature-rejected':
          return this.refuse(response, {
            statusCode: 401,
            message: `signature verification failed: ${outcome.reason}`,
            id: outcome.id,
          });
        case 'unauthorized':
          return this.refuse(response, {
            ...REFUSALS.unauthorized,
            ...(outcome.basic ? { challenge: BASIC_CHALLENGE } : {}),
          });
        default:
          return this.refuse(response, REFUSALS[outcome.kind]);
      }
    };

    this.handler = (request, response) => {
      const url = captureOf(request);
      if (url === undefined) return false;
      run(request, response, url.token, url.query).catch((error: Error) => {
        this.logger.error(`capture failed: ${error.message}`);
        if (!response.headersSent) this.refuse(response, { statusCode: 500, message: 'internal error' });
      });
      return true;
    };
  }

  private send(
    response: ServerResponse,
    statusCode: number,
    json: string,
    headers: OutgoingHttpHeaders = {},
  ) {
    response.writeHead(statusCode, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
      ...(this.closing ? { connection: 'close' } : {}),
      ...headers,
    });
    response.end(json);
  }

  private refuse(
    response: ServerResponse,
    { statusCode, message, id, retryAfter, challenge }: Refusal,
  ): void {
    const error = STATUS_CODES[statusCode] ?? 'Error';
    this.send(
      response,
      statusCode,
      JSON.stringify({ statusCode, error, message, ...(id === undefined ? {} : { id }) }),
      {
        ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }),
        ...(challenge === undefined ? {} : { 'www-authenticate': challenge }),
      },
    );
  }
}
