import { Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../../config/environment';
import { DeliveryQueue } from '../../delivery/delivery-queue.service';
import { CaptureRepository, type NewCapture, type StoreOutcome } from './capture.repository';
import { GroupCommit } from '../../common/group-commit';

/**
 * Connections of the capture pool, and so batches committed at once. Two measured better than four on
 * the 2-core benchmark box (service, PostgreSQL and load generator together): fewer, larger batches.
 * Batches grow with the load (up to CAPTURE_BATCH_MAX_ITEMS), so two lanes do not cap throughput.
 */
export const CAPTURE_POOL_SIZE = 2;
/** Captures per batch at most. */
export const CAPTURE_BATCH_MAX_ITEMS = 500;
/** Body bytes per batch at most (a single larger body is written alone). */
export const CAPTURE_BATCH_MAX_BYTES = 16 * 1024 * 1024;

/** The capture path's own pool (from DATABASE_URL), outside the ORM. */
export const captureRepositoryProvider: Provider = {
  provide: CaptureRepository,
  inject: [ConfigService],
  useFactory: (config: ConfigService<Environment, true>) =>
    new CaptureRepository(config.get('DATABASE_URL', { infer: true }), CAPTURE_POOL_SIZE),
};

/** What became of one capture: stored (or refused) by the database, or failed on its own data. */
export type WriteOutcome = StoreOutcome | { kind: 'failed'; error: Error };

/** A batch failed on one of its rows' data (class 22) or a constraint (class 23), not on the database being away. */
function isRowError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Writes captures durably with group commit: concurrent captures are stored together in one statement
 * (CaptureRepository), and each caller is answered once its batch is committed. After each commit the
 * batch's new deliveries are handed to the delivery queue without waiting: if Redis is down, the rows stay
 * `pending` and the delivery sweeper enqueues them later, so a capture never fails because of Redis.
 * Rejects (for the whole batch) when PostgreSQL fails.
 */
@Injectable()
export class CaptureWriter implements OnApplicationShutdown {
  private readonly logger = new Logger(CaptureWriter.name);
  private readonly batches: GroupCommit<NewCapture, WriteOutcome>;
  private shutdown?: Promise<void>;

  constructor(
    private readonly repository: CaptureRepository,
    private readonly deliveryQueue: DeliveryQueue,
  ) {
    this.batches = new GroupCommit((captures) => this.commit(captures), {
      maxInFlight: CAPTURE_POOL_SIZE,
      maxBatchItems: CAPTURE_BATCH_MAX_ITEMS,
      maxBatchBytes: CAPTURE_BATCH_MAX_BYTES,
      sizeOf: (capture) => capture.body.length,
    });
  }

  /** Resolves after the capture's batch is committed; rejects when it could not be stored. */
  write(capture: NewCapture): Promise<WriteOutcome> {
    return this.batches.submit(capture);
  }

  private async commit(captures: NewCapture[]): Promise<WriteOutcome[]> {
    const outcomes = await this.storeIsolatingBadRows(captures);
    const deliveryIds = outcomes.flatMap((outcome) => (outcome.kind === 'stored' ? outcome.deliveryIds : []));
    if (deliveryIds.length > 0) {
      this.deliveryQueue
        .enqueue(deliveryIds.map((id) => ({ id })))
        .catch((error: Error) =>
          this.logger.warn(
            `${deliveryIds.length} deliveries left to the sweeper (enqueue failed: ${error.message})`,
          ),
        );
    }
    return outcomes;
  }

  /**
   * One statement for the batch. Should a row's data make it fail, the rows are retried one by one, so
   * one bad request cannot fail the others of its batch (that row's caller alone gets the error).
   */
  private async storeIsolatingBadRows(captures: NewCapture[]): Promise<WriteOutcome[]> {
    try {
      return await this.repository.storeBatch(captures);
    } catch (error) {
      if (captures.length === 1 || !isRowError(error)) throw error;
      this.logger.warn(
        `a capture batch of ${captures.length} failed (${(error as Error).message}); storing its rows one by one`,
      );
      const outcomes: WriteOutcome[] = [];
      for (const capture of captures) {
        try {
          outcomes.push((await this.repository.storeBatch([capture]))[0]);
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
    this.shutdown ??= this.batches.close().then(() => this.repository.close());
    return this.shutdown;
  }
}
