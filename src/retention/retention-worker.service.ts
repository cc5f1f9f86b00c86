import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { setTimeout as sleep } from 'node:timers/promises';
import { Counter } from 'prom-client';
import { PeriodicTask } from '../common/periodic-task';
import type { Environment, PlanRetention } from '../config/environment';
import { Metrics } from '../metrics/metrics.service';
import { type ExpiringGroup, type GroupCursor, RetentionRepository } from './retention.repository';

/** Events deleted per statement: one short transaction, one run of the statistics triggers for the lot. */
export const RETENTION_BATCH = 1000;
/**
 * After each batch a pass waits this many times as long as the batch took, so that it takes at most a third
 * of one database connection's time, and less when the database is busy (its batches are slower). Measured
 * (BENCHMARKS.md, "Retention"): with no pause, capture p99 rose by about a fifth and capture throughput fell
 * by 14 % while 7,000 events/s were deleted; waiting as long as the batch (2,300 to 3,400 events/s) or twice
 * as long (2,000/s, still more than the box captures) left both within the run-to-run noise, the latter
 * more often.
 */
const PAUSE_PER_BATCH_TIME = 2;

/**
 * The worker's part of retention (README, "Retention"): every RETENTION_INTERVAL_MS, a pass deletes every
 * event past its endpoint's retention except dead-lettered ones, group by group (an endpoint's events of
 * one status), RETENTION_BATCH at a time, oldest first, pausing after each (PAUSE_PER_BATCH_TIME) so that
 * deleting a backlog (a lowered RETENTION_DAYS, a first start on an old database) leaves captures their
 * share of the database.
 * Several workers may run passes at once: each batch locks the rows it deletes and skips those another
 * holds (RetentionRepository.deleteBatch), so they share the work without waiting on each other, and an
 * event is deleted, and counted, once. A pass that is still going when the next is due is not doubled;
 * shutdown stops a pass between two batches.
 */
@Injectable()
export class RetentionWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(RetentionWorker.name);
  private readonly retention: PlanRetention;
  private readonly runs: PeriodicTask;
  private readonly deletedEvents: Counter;
  private readonly passes: Counter;
  private stopping = false;

  constructor(
    private readonly events: RetentionRepository,
    config: ConfigService<Environment, true>,
    metrics: Metrics,
  ) {
    this.retention = config.get('RETENTION_DAYS', { infer: true });
    this.runs = new PeriodicTask(
      () => this.pass(),
      config.get('RETENTION_INTERVAL_MS', { infer: true }),
      (error) => this.logger.warn(`retention pass stopped early: ${error.message}`),
    );
    this.deletedEvents = new Counter({
      name: 'hooktrail_retention_deleted_events_total',
      help: 'Events deleted by retention (past their plan or endpoint retention; deliveries go with them)',
      registers: [metrics.registry],
    });
    this.passes = new Counter({
      name: 'hooktrail_retention_passes_total',
      help: 'Retention passes completed by this process',
      registers: [metrics.registry],
    });
  }

  onApplicationBootstrap(): void {
    this.runs.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.runs.stop();
  }

  /** Deletes every expired event it finds; logs how many (when any) with the pass's duration. */
  async pass(): Promise<void> {
    const started = Date.now();
    let deleted = 0;
    for (const group of await this.events.expiringGroups(this.retention)) {
      if (this.stopping) return;
      deleted += await this.deleteGroup(group);
    }
    if (this.stopping) return;
    this.passes.inc();
    if (deleted > 0) {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      this.logger.log(`retention deleted ${deleted} expired events (with their deliveries) in ${seconds} s`);
    }
  }

  /** Deletes the group's expired events, batch after batch, until a batch finds fewer than a full one. */
  private async deleteGroup(group: ExpiringGroup): Promise<number> {
    let after: GroupCursor | null = null;
    let deleted = 0;
    while (!this.stopping) {
      const started = Date.now();
      const batch = await this.events.deleteBatch(this.retention, group, after, RETENTION_BATCH);
      this.deletedEvents.inc(batch.deleted);
      deleted += batch.deleted;
      if (batch.taken < RETENTION_BATCH) break;
      after = batch.last;
      await sleep((Date.now() - started) * PAUSE_PER_BATCH_TIME);
    }
    return deleted;
  }
}
