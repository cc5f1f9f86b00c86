import { Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type Redis from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { atMostEvery } from '../../common/at-most-every';
import type { Environment } from '../../config/environment';
import { RoutingSignal } from './routing-signal';
import {
  type Claim,
  claimOf,
  type ClaimRequest,
  type Claims,
  DedupClaims,
  staleClaimAfterMs,
} from '../../ingest/dedup-claims';
import { Metrics } from '../../metrics/metrics.service';
import { REDIS } from '../../redis/redis.module';
import { CaptureRepository, type NewCapture, type StoreOutcome } from './capture.repository';
import { GroupCommit } from '../../common/group-commit';

/**
 * Connections of the capture pool, and so batches committed at once. Two measured better than four on
 * the 2-core benchmark box (service, PostgreSQL and load generator together): fewer, larger batches.
 * Batches grow with the load (up to CAPTURE_BATCH_MAX_ITEMS), so two lanes do not cap throughput.
 */
export const CAPTURE_POOL_SIZE = 2;
/**
 * While one batch commits, the other lane waits for company (GroupCommitOptions.lingerMs): until as many
 * captures wait as that batch holds, that batch ends, or the oldest has waited this long. Without it, under
 * load half the batches carried a single capture and held a lane for a whole commit while dozens waited;
 * with it, 2–13 % (BENCHMARKS.md, 2026-11-27). A lone capture, with nothing committing, still goes at once.
 */
export const CAPTURE_BATCH_LINGER_MS = 4;
/** Captures per batch at most. */
export const CAPTURE_BATCH_MAX_ITEMS = 500;
/** Body bytes per batch at most (a single larger body is written alone). */
export const CAPTURE_BATCH_MAX_BYTES = 16 * 1024 * 1024;
/**
 * Captures allowed to wait for a batch. Two lanes commit up to 1,000 captures in a few tens of
 * milliseconds, so a queue this long is a second or more of work: past it, a capture could not be answered
 * in time anyway, and is refused at once with 503 instead of being held in memory.
 */
export const CAPTURE_QUEUE_MAX_ITEMS = 5000;
/** Body bytes allowed to wait (a lone capture of any allowed size still goes when nothing waits). */
export const CAPTURE_QUEUE_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The share of CAPTURE_TIMEOUT_MS a batch may take to commit: a capture that cannot start its commit this
 * long before its deadline is refused, and the capture pool's statement time-out is this allowance, so
 * that a batch too slow to answer in time is rolled back by PostgreSQL rather than committed late.
 */
export function commitAllowanceMs(captureTimeoutMs: number): number {
  return Math.floor(captureTimeoutMs / 2);
}

/** The capture path's own pool (from DATABASE_URL), outside the ORM. */
export const captureRepositoryProvider: Provider = {
  provide: CaptureRepository,
  inject: [ConfigService],
  useFactory: (config: ConfigService<Environment, true>) =>
    new CaptureRepository(config.get('DATABASE_URL', { infer: true }), {
      poolSize: CAPTURE_POOL_SIZE,
      statementTimeoutMs: commitAllowanceMs(config.get('CAPTURE_TIMEOUT_MS', { infer: true })),
    }),
};

/** The capture path's dedup claims, on the shared Redis client. */
export const dedupClaimsProvider: Provider = {
  provide: DedupClaims,
  inject: [REDIS, ConfigService],
  useFactory: (redis: Redis, config: ConfigService<Environment, true>) =>
    new DedupClaims(redis, config.get('REDIS_PREFIX', { infer: true })),
};

type RowOutcome = StoreOutcome | { kind: 'failed'; error: Error } | { kind: 'expired' };

/**
 * What became of one capture: stored (or refused) by the database, or failed on its own data. `failed`: the
 * database refused the row itself; `expired`: not written, since its batch was retried row by row and its
 * turn came after the batch's start-by time (it is answered 503, as a capture that waited); `first-pending`
 * carries the claim of the repeat's first event, which was not committed.
 */
export type WriteOutcome =
  Exclude<RowOutcome, { kind: 'first-pending' }> | { kind: 'first-pending'; claim: Claim };

/** The dedup claim a capture asks for, when it has a key. */
function claimRequestOf(capture: NewCapture): ClaimRequest | null {
  const key = capture.verdict.dedupKey;
  if (key === null || capture.dedup === null) return null;
  return { token: capture.token, key, eventId: capture.id, ...capture.dedup };
}

/** A batch failed on one of its rows' data (class 22) or a constraint (class 23), not on the database being away. */
function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Writes captures durably with group commit: concurrent captures are stored together in one statement
 * (CaptureRepository), and each caller is answered once its batch is committed. A batch's dedup keys are
 * claimed in Redis first, in one call (DedupClaims); the claims of its captures that were not stored are
 * released after it. After each commit the routers are told that events wait to be routed, without
 * waiting: if Redis is down, the events wait in `routing_queue` for a router's next look, and a batch whose
 * keys cannot be claimed is stored without claims (its keys looked up in PostgreSQL's record instead), so a
 * capture never fails because of Redis.
 * Rejects (for the whole batch) when PostgreSQL fails.
 */
@Injectable()
export class CaptureWriter implements OnApplicationShutdown {
  private readonly logger = new Logger(CaptureWriter.name);
  private readonly batches: GroupCommit<NewCapture, WriteOutcome>;
  private shutdown?: Promise<void>;
  /** A warning that dedup keys could not be claimed is logged at most every 10 s. */
  private readonly unclaimedLog = atMostEvery(10_000);

  private readonly commitAllowanceMs: number;
  /** A batch has committed or failed this long after its claims were made. */
  private readonly settleAfterMs: number;
  private readonly closing = new AbortController();

  constructor(
    private readonly repository: CaptureRepository,
    private readonly routing: RoutingSignal,
    private readonly claims: DedupClaims,
    config: ConfigService<Environment, true>,
    metrics: Metrics,
  ) {
    this.commitAllowanceMs = commitAllowanceMs(config.get('CAPTURE_TIMEOUT_MS', { infer: true }));
    this.settleAfterMs = staleClaimAfterMs(config.get('CAPTURE_TIMEOUT_MS', { infer: true }));
    this.batches = new GroupCommit((captures, startBy) => this.commit(captures, startBy), {
      maxInFlight: CAPTURE_POOL_SIZE,
      maxBatchItems: CAPTURE_BATCH_MAX_ITEMS,
      maxBatchBytes: CAPTURE_BATCH_MAX_BYTES,
      sizeOf: (capture) => capture.body.length,
      maxWaitingItems: CAPTURE_QUEUE_MAX_ITEMS,
      maxWaitingBytes: CAPTURE_QUEUE_MAX_BYTES,
      lingerMs: CAPTURE_BATCH_LINGER_MS,
    });
    metrics.gauge(
      'hooktrail_capture_queue',
      `Captures of this process waiting for a batch to commit (at most ${CAPTURE_QUEUE_MAX_ITEMS}: beyond, 503)`,
      () => this.batches.queued,
    );
  }

  /** Captures waiting for a batch now. */
  get queued(): number {
    return this.batches.queued;
  }

  /**
   * Resolves after the capture's batch is committed. Rejects when it could not be stored: PostgreSQL
   * failed, the queue is full (GroupCommitFullError), or it could not be committed by `answerBy`
   * (GroupCommitDeadlineError).
   */
  write(capture: NewCapture, answerBy: number): Promise<WriteOutcome> {
    return this.batches.submit(capture, { answerBy, commitAllowanceMs: this.commitAllowanceMs });
  }

  private async commit(captures: NewCapture[], startBy: number): Promise<WriteOutcome[]> {
    const asks = captures.map(claimRequestOf);
    // Most batches have no key to claim, and go to PostgreSQL at once.
    const claims = asks.every((ask) => ask === null)
      ? asks.map(() => null)
      : await this.claimed(asks, startBy);
    const firstIds = claims.map((claim) => (claim === null || claim.own ? null : claim.eventId));
    let outcomes: RowOutcome[];
    try {
      outcomes = await this.storeIsolatingBadRows(captures, firstIds, startBy);
    } catch (error) {
      this.release(asks, claims, () => true);
      throw error;
    }
    this.release(asks, claims, (index) => outcomes[index].kind !== 'stored');
    if (outcomes.some((outcome) => outcome.kind === 'stored')) this.routing.announce();
    return outcomes.map((outcome, index) =>
      outcome.kind === 'first-pending' ? { kind: 'first-pending', claim: claims[index] as Claim } : outcome,
    );
  }

  /**
   * The claims on the batch's dedup keys. When Redis cannot give them before the batch must start
   * (`startBy`, so that its statement still commits by its captures' deadline), PostgreSQL's record stands
   * in: a key an event stored within its window holds makes the capture that event's repeat (one statement
   * for the batch's keys, only while Redis is unavailable and there is time before `startBy`), and the other
   * captures are stored without dedup.
   * A repeat that found its key held by another claim keeps waiting for that claim's event (answered 503 at
   * its deadline if it is not committed), and is never stored as new.
   */
  private async claimed(asks: (ClaimRequest | null)[], startBy: number): Promise<(Claim | null)[]> {
    const claims = await this.claims.claim(asks, startBy - Date.now());
    if (claims !== null) return this.recovered(asks, claims, startBy);
    if (this.unclaimedLog.due())
      this.logger.warn(
        'Redis is unavailable or slow: dedup keys are looked up in PostgreSQL, and captures stored without claims',
      );
    const now = Date.now();
    // A Redis that did not answer in time leaves no time to look up either: the batch must start now.
    const unclaimed =
      now < startBy ? asks.flatMap((ask, index) => (ask !== null && !ask.heldBy ? [index] : [])) : [];
    const found =
      unclaimed.length === 0
        ? []
        : await this.repository.findDedupEvents(unclaimed.map((index) => asks[index] as ClaimRequest));
    const recorded = new Map(unclaimed.map((index, position) => [index, found[position]]));
    return asks.map((ask, index) => {
      if (ask === null) return null;
      if (ask.heldBy) return claimOf(ask.heldBy, ask, now);
      const event = recorded.get(index);
      return event ? claimOf(`${event.eventId}:${event.receivedAt}`, ask, now) : null;
    });
  }

  /**
   * The claims, with those Redis lost found again. A claim of ours on a key whose window began before Redis's
   * epoch (it restarted, or a replica took over, since) may stand where an earlier event's claim was: such
   * keys are looked up in PostgreSQL, where each event keeps the key it claimed (one statement, only within
   * a window after a restart). An event found holds the key: it is put back in Redis for the rest of its
   * window, and this capture is its repeat.
   */
  private async recovered(
    asks: (ClaimRequest | null)[],
    { claims, epoch, since, began }: Claims,
    startBy: number,
  ): Promise<(Claim | null)[]> {
    if (began) void this.settle(epoch, since);
    const doubtful = claims.flatMap((claim, index) => {
      const ask = asks[index];
      return claim?.own && ask !== null && claim.claimedAt - ask.windowMs < since ? [index] : [];
    });
    if (doubtful.length === 0) return claims;
    let found: Awaited<ReturnType<CaptureRepository['findDedupEvents']>>;
    try {
      found = await this.repository.findDedupEvents(doubtful.map((index) => asks[index] as ClaimRequest));
    } catch (error) {
      this.release(asks, claims, () => true);
      throw error;
    }
    const answered = [...claims];
    const restores = found.flatMap((event, position) => {
      if (event === null) return [];
      const index = doubtful[position];
      const [ask, own] = [asks[index] as ClaimRequest, claims[index] as Claim];
      answered[index] = claimOf(`${event.eventId}:${event.receivedAt}`, ask, own.claimedAt);
      const leftMs = Math.max(1, event.receivedAt + ask.windowMs - own.claimedAt);
      return [{ ask, own, found: answered[index] as Claim, leftMs }];
    });
    // Not put back, a key keeps this capture's claim, whose event is never stored: its next repeat waits for
    // that claim to go stale, then takes it over and finds the event here again.
    if (restores.length > 0)
      await this.claims.restore(restores, startBy - Date.now()).catch((error: Error) => {
        this.logger.warn(`dedup claims found in PostgreSQL were not put back in Redis: ${error.message}`);
      });
    return answered;
  }

  /**
   * Moves a new epoch back to the capture time of the newest event that claimed a key before it: the claims
   * Redis lost are those events', so no later claim is doubtful (and on a new installation, or one whose
   * endpoints had no dedup, none at all). It first waits for the batches in flight when the epoch began to
   * commit or fail; until then every claim within a window of the epoch is looked up.
   */
  private async settle(epoch: string, since: number): Promise<void> {
    try {
      await sleep(this.settleAfterMs, undefined, { signal: this.closing.signal });
      await this.claims.settle(epoch, await this.repository.lastDedupEventBefore(since));
    } catch (error) {
      if (!this.closing.signal.aborted)
        this.logger.warn(
          `dedup claims are looked up in PostgreSQL for a window yet: ${(error as Error).message}`,
        );
    }
  }

  /**
   * Releases the own claims of the captures `unstored` picks, without waiting (a capture sent again claims
   * its key anew; a claim left behind goes stale).
   */
  private release(
    asks: (ClaimRequest | null)[],
    claims: (Claim | null)[],
    unstored: (index: number) => boolean,
  ): void {
    const held = claims.flatMap((claim, index) =>
      claim !== null && claim.own && unstored(index) ? [{ ask: asks[index] as ClaimRequest, claim }] : [],
    );
    if (held.length > 0) void this.claims.release(held);
  }

  /**
   * One statement for the batch. Should a row's data make it fail, the rows are retried one by one, so
   * one bad request cannot fail the others of its batch (that row's caller alone gets the error). No row
   * is written after the batch's start-by time: its callers are answered 503 at their deadline, and a
   * capture answered 503 must not have been stored (the provider sends it again).
   */
  private async storeIsolatingBadRows(
    captures: NewCapture[],
    firstIds: (string | null)[],
    startBy: number,
  ): Promise<RowOutcome[]> {
    try {
      return await this.repository.storeBatch(captures, firstIds);
    } catch (error) {
      if (captures.length === 1 || !isRowError(error)) throw error;
      this.logger.warn(
        `a capture batch of ${captures.length} failed (${(error as Error).message}); storing its rows one by one`,
      );
      const outcomes: RowOutcome[] = [];
      for (const [index, capture] of captures.entries()) {
        if (Date.now() > startBy) {
          outcomes.push({ kind: 'expired' });
          continue;
        }
        try {
          outcomes.push((await this.repository.storeBatch([capture], [firstIds[index]]))[0]);
        } catch (rowError) {
          if (!isRowError(rowError)) throw rowError;
          outcomes.push({ kind: 'failed', error: rowError as Error });
        }
      }
      return outcomes;
    }
  }

  /**
   * Called after the HTTP server has stopped: commits what was already accepted, then closes the pool.
   * Idempotent (a signal and an explicit app.close() may both get here).
   */
  onApplicationShutdown(): Promise<void> {
    this.closing.abort();
    this.shutdown ??= this.batches.close().then(() => this.repository.close());
    return this.shutdown;
  }
}
