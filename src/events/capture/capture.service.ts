import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { Subject } from 'rxjs';
import type { Environment } from '../../config/environment';
import { CaptureRateLimiter } from './capture-rate-limiter';
import { CaptureWriter } from './capture-writer';

/** A request that arrived at a capture URL, as the HTTP layer read it. */
export interface CaptureRequest {
  token: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw query string without "?". */
  query: string;
  /** The exact body bytes (empty when there was none). */
  body: Buffer;
  sourceIp: string | null;
}

/** The answer to give the sender: status code, and the JSON body. */
export type CaptureResponse =
  { statusCode: 200; body: { id: string } } | { statusCode: 403 | 404 | 429 | 500 | 503; message: string };

/** What the real-time layer learns of each stored event. */
export interface CapturedEvent {
  eventId: string;
  endpointId: string;
  status: 'received';
  method: string;
  receivedAt: Date;
  sourceIp: string | null;
  /** The whole body as text when it is small UTF-8 (live dashboards show and filter it); absent otherwise. */
  body?: string;
}

/** Bodies up to this size travel with the live `event.created` message. */
export const LIVE_BODY_LIMIT_BYTES = 4096;

function liveBody(body: Buffer): string | undefined {
  return body.length <= LIVE_BODY_LIMIT_BYTES && isUtf8(body) && !body.includes(0)
    ? body.toString('utf8')
    : undefined;
}

/** Tokens are 32 base64url characters; anything that cannot be one is unknown without asking the database. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The rules of the capture URL: unknown token 404, inactive endpoint 403, over the per-endpoint rate
 * 429, stored 200 `{id}` once committed, PostgreSQL failing 503. Nothing is stored in any non-2xx case.
 */
@Injectable()
export class CaptureService {
  private readonly logger = new Logger(CaptureService.name);
  private readonly rateLimiter: CaptureRateLimiter;

  /**
   * Every stored event, right after its commit. Subscribers must not throw and must not block: they run
   * on the capture path, before the sender is answered.
   */
  readonly captured$ = new Subject<CapturedEvent>();

  constructor(
    private readonly writer: CaptureWriter,
    config: ConfigService<Environment, true>,
  ) {
    this.rateLimiter = new CaptureRateLimiter(config.get('CAPTURE_RATE_LIMIT_PER_S', { infer: true }));
  }

  async capture(request: CaptureRequest): Promise<CaptureResponse> {
    if (!TOKEN_SHAPE.test(request.token)) return NOT_FOUND;
    if (!this.rateLimiter.tryAcquire(request.token)) {
      return { statusCode: 429, message: 'too many captures for this endpoint; retry after a second' };
    }
    const eventId = randomUUID();
    const receivedAt = new Date();
    let outcome;
    try {
      outcome = await this.writer.write({ id: eventId, receivedAt, ...request });
    } catch (error) {
      this.logger.error(`capture not stored, answering 503: ${(error as Error).message}`);
      return { statusCode: 503, message: 'the event could not be stored right now; retry later' };
    }
    switch (outcome.kind) {
      case 'stored':
        this.captured$.next({
          eventId,
          endpointId: outcome.endpointId,
          status: 'received',
          method: request.method,
          receivedAt,
          sourceIp: request.sourceIp,
          body: liveBody(request.body),
        });
        return { statusCode: 200, body: { id: eventId } };
      case 'unknown-endpoint':
        return NOT_FOUND;
      case 'inactive-endpoint':
        return { statusCode: 403, message: 'endpoint is inactive' };
      case 'failed':
        this.logger.error(`capture refused by the database: ${outcome.error.message}`);
        return { statusCode: 500, message: 'the request could not be stored' };
    }
  }
}

const NOT_FOUND: CaptureResponse = { statusCode: 404, message: 'no endpoint has this capture URL' };
