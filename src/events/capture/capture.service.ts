import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Subject } from 'rxjs';
import type { Environment } from '../../config/environment';
import { atMostEvery } from '../../common/at-most-every';
import { GroupCommitDeadlineError, GroupCommitFullError } from '../../common/group-commit';
import { REDIS } from '../../redis/redis.module';
import { sharedCounter } from '../../redis/shared-counter';
import { CaptureRateLimiter } from './capture-rate-limiter';
import { judgeCapture, storedHeaders, type Verdict } from '../../ingest/capture-rules';
import { type Claim, staleClaimAfterMs } from '../../ingest/dedup-claims';
import { CaptureRulesCache } from './capture-rules.cache';
import { CaptureWriter, type WriteOutcome } from './capture-writer';
import { isStorableText } from './capture.repository';

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

/**
 * What became of a capture. The HTTP edge (capture-route.ts) maps it to a status code: stored 200,
 * duplicate 200 (with the first event's id), signature-rejected 401 (stored, not forwarded), unauthorized
 * 401 (nothing stored), unknown-endpoint 404, inactive-endpoint 403, rate-limited 429, unavailable 503 with
 * Retry-After, refused 500 (a row the database would not take).
 */
export type CaptureOutcome =
  | { kind: 'stored'; id: string }
  | { kind: 'duplicate'; id: string }
  | { kind: 'signature-rejected'; id: string; reason: string }
  /** `basic`: the endpoint's inbound auth is Basic, which the answer's WWW-Authenticate challenge names. */
  | { kind: 'unauthorized'; basic: boolean }
  | { kind: 'unknown-endpoint' }
  | { kind: 'inactive-endpoint' }
  | { kind: 'rate-limited' }
  | { kind: 'unavailable'; reason: 'database' | 'overloaded' | 'timeout' }
  | { kind: 'refused' };

/** What the real-time layer learns of each stored event. */
export interface CapturedEvent {
  eventId: string;
  endpointId: string;
  status: 'received';
  verification: Verdict['verification'];
  method: string;
  receivedAt: Date;
  sourceIp: string | null;
  /**
   * The whole body when it is small UTF-8 text (live dashboards show and filter it; decoded only when an
   * announcement is written for a watched endpoint); absent otherwise.
   */
  body?: Buffer;
}

/** Bodies up to this size travel with the live `event.created` message. */
export const LIVE_BODY_LIMIT_BYTES = 4096;

/**
 * Times a capture is judged again after its endpoint's rules changed under it (each time they are read
 * anew); past this, the rules are changing faster than captures commit, and it is answered 503.
 */
const RULE_READS_MAX = 3;

/**
 * How long a repeat whose first event is not committed yet waits before it is sent again: that event's batch
 * is in flight (its commit takes milliseconds), or was never stored and its claim goes stale.
 */
const FIRST_PENDING_RETRY_MS = 10;

/** Tokens are 32 base64url characters; anything that cannot be one is unknown without asking the database. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{1,128}$/;

/** Why a capture that was not stored got 503: PostgreSQL failed, too much was waiting, or time ran out. */
function unavailableReason(error: unknown): 'database' | 'overloaded' | 'timeout' {
  if (error instanceof GroupCommitFullError) return 'overloaded';
  if (error instanceof GroupCommitDeadlineError) return 'timeout';
  return 'database';
}

/**
 * The rules of the capture URL: unknown token, inactive endpoint, over the per-endpoint rate, stored once
 * committed, or unavailable (PostgreSQL failing, or the capture could not be committed by its deadline).
 * Nothing is stored in any outcome but `stored`.
 */
@Injectable()
export class CaptureService {
  private readonly logger = new Logger(CaptureService.name);
  private readonly rateLimiter: CaptureRateLimiter;
  private readonly staleClaimAfterMs: number;
  /** Refusals for load or time are counted in /metrics, not logged one by one; this throttles the log line. */
  private readonly sheddingLog = atMostEvery(10_000);

  /**
   * Every stored event, right after its commit. Subscribers must not throw and must not block: they run
   * on the capture path, before the sender is answered.
   */
  readonly captured$ = new Subject<CapturedEvent>();

  constructor(
    private readonly writer: CaptureWriter,
    private readonly rules: CaptureRulesCache,
    @Inject(REDIS) redis: Redis,
    config: ConfigService<Environment, true>,
  ) {
    this.rateLimiter = new CaptureRateLimiter(
      config.get('CAPTURE_RATE_LIMIT_PER_S', { infer: true }),
      sharedCounter(redis, `${config.get('REDIS_PREFIX', { infer: true })}:capture-rate`),
    );
    this.staleClaimAfterMs = staleClaimAfterMs(config.get('CAPTURE_TIMEOUT_MS', { infer: true }));
  }

  /**
   * Judges the request by its endpoint's ingest rules and stores it as an event, answering by `answerBy`
   * (epoch ms) at the latest.
   */
  async capture(request: CaptureRequest, answerBy: number): Promise<CaptureOutcome> {
    if (!TOKEN_SHAPE.test(request.token)) return { kind: 'unknown-endpoint' };
    if (!(await this.rateLimiter.tryAcquire(request.token))) return { kind: 'rate-limited' };
    const eventId = randomUUID();
    const receivedAt = new Date();
    const bodyIsText = isStorableText(request.body);
    let rules = this.rules.get(request.token);
    let reads = 0;
    /** The claim this capture last found holding its dedup key, its event not committed then. */
    let heldBy: Claim | null = null;
    for (;;) {
      const verdict = judgeCapture(rules, request, receivedAt.getTime());
      const dedup =
        verdict.dedupKey === null || rules.dedup === null
          ? null
          : {
              windowMs: rules.dedup.windowMs,
              heldBy: heldBy?.value ?? null,
              takeOver: heldBy !== null && this.isStale(heldBy),
            };
      let outcome;
      try {
        outcome = await this.writer.write(
          {
            id: eventId,
            receivedAt,
            bodyIsText,
            rulesVersion: rules.version,
            verdict,
            dedup,
            ...request,
            headers: storedHeaders(rules, request.headers),
          },
          answerBy,
        );
      } catch (error) {
        const reason = unavailableReason(error);
        this.logUnavailable(reason, error as Error);
        return { kind: 'unavailable', reason };
      }
      if (outcome.kind === 'first-pending') {
        heldBy = outcome.claim;
        if (!this.isStale(heldBy)) await sleep(FIRST_PENDING_RETRY_MS);
        continue;
      }
      if (outcome.kind === 'stale-rules') {
        if (reads++ === RULE_READS_MAX) return { kind: 'unavailable', reason: 'timeout' };
        try {
          rules = await this.rules.reload(request.token);
        } catch (error) {
          this.logUnavailable('database', error as Error);
          return { kind: 'unavailable', reason: 'database' };
        }
        continue;
      }
      if (outcome.kind === 'expired') return { kind: 'unavailable', reason: 'timeout' };
      if (outcome.kind === 'unauthorized')
        return { kind: 'unauthorized', basic: rules.inboundAuth?.scheme === 'basic' };
      return this.answer(outcome, request, { eventId, receivedAt, bodyIsText, verdict });
    }
  }

  /** Whether a claim's event will never be stored (see staleClaimAfterMs). */
  private isStale(claim: Claim): boolean {
    return Date.now() - claim.claimedAt > this.staleClaimAfterMs;
  }

  private answer(
    outcome: Exclude<WriteOutcome, { kind: 'stale-rules' | 'unauthorized' | 'expired' | 'first-pending' }>,
    request: CaptureRequest,
    stored: { eventId: string; receivedAt: Date; bodyIsText: boolean; verdict: Verdict },
  ): CaptureOutcome {
    switch (outcome.kind) {
      case 'stored': {
        const { eventId, receivedAt, bodyIsText, verdict } = stored;
        this.captured$.next({
          eventId,
          endpointId: outcome.endpointId,
          status: 'received',
          verification: verdict.verification,
          method: request.method,
          receivedAt,
          sourceIp: request.sourceIp,
          body: bodyIsText && request.body.length <= LIVE_BODY_LIMIT_BYTES ? request.body : undefined,
        });
        const { reason } = verdict.verification;
        return verdict.forward || reason === null
          ? { kind: 'stored', id: eventId }
          : { kind: 'signature-rejected', id: eventId, reason };
      }
      case 'duplicate':
        return { kind: 'duplicate', id: outcome.firstId };
      case 'unknown-endpoint':
      case 'inactive-endpoint':
        return { kind: outcome.kind };
      case 'failed':
        this.logger.error(`capture refused by the database: ${outcome.error.message}`);
        return { kind: 'refused' };
    }
  }

  private logUnavailable(reason: 'database' | 'overloaded' | 'timeout', error: Error): void {
    if (reason === 'database') {
      this.logger.error(`capture not stored, answering 503: ${error.message}`);
      return;
    }
    if (!this.sheddingLog.due()) return;
    this.logger.warn(
      `captures are being refused with 503 (${reason}: ${error.message}; ${this.writer.queued} waiting); ` +
        'hooktrail_captures_total{outcome="unavailable"} counts them',
    );
  }
}
