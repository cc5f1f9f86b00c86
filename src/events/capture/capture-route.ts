import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Environment } from '../../config/environment';
import { captureOutcomeOf, Metrics } from '../../metrics/metrics.service';
import { type CaptureOutcome, CaptureService } from './capture.service';

export const CAPTURE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];

/** The Content-Type the sender gave, kept aside while Fastify reads the body (see the onRequest hook). */
const SENT_CONTENT_TYPE = Symbol('hooktrail.sentContentType');
type WithSentContentType = { [SENT_CONTENT_TYPE]?: string };

class BodyTooLargeError extends Error {
  readonly statusCode = 413;
  readonly code = 'FST_ERR_CTP_BODY_TOO_LARGE';
}

class RequestAbortedError extends Error {
  readonly statusCode = 400;
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** Reads a body Fastify leaves unread (GET and HEAD), with the same limit. */
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
    stream.on('end', () => resolve(Buffer.concat(chunks, length)));
    stream.on('error', reject);
    stream.on('close', () => {
      if (!stream.complete)
        reject(new RequestAbortedError('the request was aborted before its body was read'));
    });
  });
}

/** Seconds a provider is asked to wait before sending again a capture that was not stored (503). */
const RETRY_AFTER_S = '5';

/** The HTTP answer for each outcome of a capture that was not stored. */
const REFUSALS: Record<Exclude<CaptureOutcome['kind'], 'stored'>, { statusCode: number; message: string }> = {
  'unknown-endpoint': { statusCode: 404, message: 'no endpoint has this capture URL' },
  'inactive-endpoint': { statusCode: 403, message: 'endpoint is inactive' },
  'rate-limited': { statusCode: 429, message: 'too many captures for this endpoint; retry after a second' },
  unavailable: { statusCode: 503, message: 'the event could not be stored right now; retry later' },
  refused: { statusCode: 500, message: 'the request could not be stored' },
};

function rawQuery(url: string | undefined): string {
  const index = url?.indexOf('?') ?? -1;
  return index === -1 ? '' : (url as string).slice(index + 1);
}

/**
 * `{SITE_URL}/in/:token` as a plain Fastify route in its own encapsulated context: no Nest pipeline, no
 * ORM unit of work, and no body parsing. Whatever the method or Content-Type, the body is read as raw
 * bytes (up to CAPTURE_MAX_BODY_BYTES, 413 beyond) and stored exactly as sent. Once the body is read, the
 * answer comes within CAPTURE_TIMEOUT_MS: 200 after the commit, or 503 with Retry-After. Errors answer in
 * Nest's JSON shape `{statusCode, error, message}`.
 */
export async function registerCaptureRoute(app: NestFastifyApplication, env: Environment): Promise<void> {
  const capture = app.get(CaptureService);
  const metrics = app.get(Metrics);
  const logger = new Logger('CaptureRoute');
  const limit = env.CAPTURE_MAX_BODY_BYTES;
  const answerWithinMs = env.CAPTURE_TIMEOUT_MS;
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();

  const send = (reply: FastifyReply, statusCode: number, body: object) =>
    reply
      .code(statusCode)
      .header('content-type', 'application/json; charset=utf-8')
      .send(JSON.stringify(body));
  const sendError = (reply: FastifyReply, statusCode: number, message: string) =>
    send(reply, statusCode, { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message });

  await fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (_request, body, done) =>
      done(null, body),
    );

    // Fastify refuses a malformed Content-Type with 415 before any parser runs; a capture takes every
    // request, so the header is set aside while the body is read as bytes and put back in the handler.
    scope.addHook('onRequest', (request, _reply, done) => {
      const contentType = request.headers['content-type'];
      if (contentType !== undefined) {
        (request as FastifyRequest & WithSentContentType)[SENT_CONTENT_TYPE] = contentType;
        delete request.headers['content-type'];
      }
      done();
    });

    scope.addHook('onResponse', (_request, reply, done) => {
      metrics.capture(captureOutcomeOf(reply.statusCode), reply.elapsedTime / 1000);
      done();
    });

    scope.setErrorHandler((error: FastifyError, _request, reply) => {
      const statusCode =
        error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500
          ? error.statusCode
          : 500;
      if (statusCode === 413)
        return sendError(reply, 413, `the body is larger than the capture limit of ${limit} bytes`);
      if (statusCode === 500) logger.error(`capture failed: ${error.message}`);
      return sendError(reply, statusCode, statusCode === 500 ? 'internal error' : error.message);
    });

    scope.route<{ Params: { token: string } }>({
      method: CAPTURE_METHODS,
      url: '/in/:token',
      exposeHeadRoute: false,
      // Helmet's browser security headers are for pages; captures answer machines, on the hot path.
      config: { helmet: { skipRoute: true } },
      handler: async (request, reply) => {
        let body = request.body as Buffer | undefined;
        if (body === undefined && hasBody(request)) body = await readBody(request.raw, limit);
        const headers = request.headers;
        const contentType = (request as FastifyRequest & WithSentContentType)[SENT_CONTENT_TYPE];
        if (contentType !== undefined) headers['content-type'] = contentType;
        const outcome = await capture.capture(
          {
            token: request.params.token,
            method: request.method,
            headers,
            query: rawQuery(request.raw.url),
            body: body ?? Buffer.alloc(0),
            sourceIp: request.ip ?? null,
          },
          Date.now() + answerWithinMs,
        );
        if (outcome.kind === 'stored') return send(reply, 200, { id: outcome.id });
        if (outcome.kind === 'rate-limited') reply.header('retry-after', '1');
        if (outcome.kind === 'unavailable') reply.header('retry-after', RETRY_AFTER_S);
        const { statusCode, message } = REFUSALS[outcome.kind];
        return sendError(reply, statusCode, message);
      },
    });
  });
}
