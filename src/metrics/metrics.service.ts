import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Job, Queue } from 'bull';
import { isMainThread } from 'node:worker_threads';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import type { Environment } from '../config/environment';
import { DELIVERY_QUEUE, type DeliveryJob, priorAttemptsOf } from '../jobs/delivery-jobs';
import { withRedisTimeout } from '../common/redis-timeout';
import { withTimeout } from '../common/with-timeout';

/** What became of one request to a capture URL. */
export const CAPTURE_OUTCOMES = [
  'stored',
  'unauthorized',
  'not_found',
  'inactive',
  'too_large',
  'rate_limited',
  'unavailable',
  'error',
] as const;
export type CaptureOutcome = (typeof CAPTURE_OUTCOMES)[number];

/** What became of one delivery attempt (the delivery's status after it). */
export const ATTEMPT_OUTCOMES = ['delivered', 'failed', 'dead_letter'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

const CAPTURE_OUTCOME_BY_STATUS: Record<number, CaptureOutcome> = {
  200: 'stored',
  401: 'unauthorized',
  403: 'inactive',
  404: 'not_found',
  413: 'too_large',
  429: 'rate_limited',
  503: 'unavailable',
};

/** The outcome a status code of the capture URL stands for (200 stored, 404 not_found, ...; others error). */
export function captureOutcomeOf(statusCode: number): CaptureOutcome {
  return CAPTURE_OUTCOME_BY_STATUS[statusCode] ?? 'error';
}

/** Seconds; CAPTURE_TIMEOUT_MS is 2 s by default (60 s at most): a capture answered after it was refused late. */
const CAPTURE_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 60];

/** Seconds; the last bucket is the longest delivery time-out allowed (DELIVERY_TIMEOUT_MS up to 120 s). */
const ATTEMPT_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

/**
 * Queue figures are read from Redis (or PostgreSQL) on each scrape; a scrape does not wait longer than this
 * for them.
 */
const QUEUE_READ_TIMEOUT_MS = 1000;

type WaitingJob = Pick<Job<DeliveryJob>, 'timestamp' | 'attemptsMade' | 'processedOn'> & {
  opts: Pick<Job['opts'], 'delay' | 'backoff'>;
};

/**
 * Since when (epoch ms) a waiting delivery job has been due. A first attempt is due when it was added
 * (plus its initial delay). Bull does not keep a retry's due time, so for a retry it is estimated as the
 * start of the previous attempt plus the schedule's delay for it (exact within the ±10 % jitter); a job
 * deferred for its destination's in-flight limit is estimated the same way, so its age may read low.
 */
export function dueSince(job: WaitingJob, retryDelaysMs: number[]): number {
  const added = job.timestamp + (job.opts.delay ?? 0);
  if (job.attemptsMade === 0 || !job.processedOn) return added;
  const index = Math.min(retryDelaysMs.length, job.attemptsMade + priorAttemptsOf(job)) - 1;
  return Math.max(added, job.processedOn + (retryDelaysMs[Math.max(0, index)] ?? 0));
}

/**
 * Whether the application collects Node's and the process's own metrics (prom-client's defaults: event-loop
 * lag, heap, GC, RSS): the one a process runs (main.ts) does; a delivery thread's does not (its process's
 * main thread reports them), nor does one hosted inside another program (the e2e tests run the service
 * inside Jest). prom-client cannot stop that collector: its GC observer stays for the life of the process
 * and holds the modules of the application that started it (prometheus/client_js#500); in Jest's worker,
 * every test file's.
 */
export const PROCESS_METRICS = Symbol('PROCESS_METRICS');

/**
 * The service's Prometheus metrics, in a registry of its own (so several applications in one process,
 * as in the tests, do not collide). The capture path calls `capture(outcome)`, the delivery worker
 * `attempt(outcome, seconds)`; the delivery queue's depth and its oldest waiting job are read from Redis
 * on each scrape. Node's default metrics are included where PROCESS_METRICS says so.
 */
@Injectable()
export class Metrics {
  private readonly logger = new Logger(Metrics.name);
  readonly registry = new Registry();
  private readonly captures: Counter<'outcome'>;
  private readonly captureDuration: Histogram<'outcome'>;
  private readonly attempts: Counter<'outcome'>;
  private readonly attemptDuration: Histogram<'outcome'>;
  private readonly retryDelaysMs: number[];
  private readonly sources: (() => Promise<MetricObjectWithValues<MetricValue<string>>[]>)[] = [];

  constructor(
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJob>,
    config: ConfigService<Environment, true>,
    @Inject(PROCESS_METRICS) processMetrics: boolean,
  ) {
    this.retryDelaysMs = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
    const registers = [this.registry];
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    this.captures = new Counter({
      name: 'hooktrail_captures_total',
      help: 'Requests to capture URLs, by outcome (stored, not_found, inactive, too_large, rate_limited, unavailable, error)',
      labelNames: ['outcome'],
      registers,
    });
    this.captureDuration = new Histogram({
      name: 'hooktrail_capture_duration_seconds',
      help: 'Time from reading a capture request to its answer, by outcome: bounded by CAPTURE_TIMEOUT_MS',
      labelNames: ['outcome'],
      buckets: CAPTURE_DURATION_BUCKETS,
      registers,
    });
    this.attempts = new Counter({
      name: 'hooktrail_delivery_attempts_total',
      help: "Delivery attempts made by this process, by the delivery's status after the attempt",
      labelNames: ['outcome'],
      registers,
    });
    this.attemptDuration = new Histogram({
      name: 'hooktrail_delivery_attempt_duration_seconds',
      help: 'Time from sending a forwarded request to the end of its response (or its failure), by outcome',
      labelNames: ['outcome'],
      buckets: ATTEMPT_DURATION_BUCKETS,
      registers,
    });
    for (const outcome of CAPTURE_OUTCOMES) this.captures.inc({ outcome }, 0);
    for (const outcome of ATTEMPT_OUTCOMES) this.attempts.inc({ outcome }, 0);

    // A delivery thread reports its own counters only: the queue's figures, read from Redis, come from the
    // main thread, into whose /metrics the thread's are merged.
    if (!isMainThread) return;
    // One read of Redis serves both queue gauges of a scrape (the registry collects them concurrently).
    let reading: Promise<QueueReading | null> | null = null;
    const read = () => {
      reading ??= this.readQueue().finally(() => setImmediate(() => (reading = null)));
      return reading;
    };
    new Gauge({
      name: 'hooktrail_delivery_queue_jobs',
      help: 'Jobs in the delivery queue by state (waiting, delayed, active), read from Redis on scrape; the same queue in every process',
      labelNames: ['state'],
      registers,
      async collect() {
        this.reset();
        const state = await read();
        if (!state) return;
        this.set({ state: 'waiting' }, state.waiting);
        this.set({ state: 'delayed' }, state.delayed);
        this.set({ state: 'active' }, state.active);
      },
    });
    new Gauge({
      name: 'hooktrail_delivery_queue_oldest_waiting_seconds',
      help: 'How long the next waiting delivery job has been due (0 when none waits), read from Redis on scrape',
      registers,
      async collect() {
        this.reset();
        const state = await read();
        if (state) this.set(state.oldestWaitingSeconds);
      },
    });
  }

  /** Counts one request to a capture URL, answered `seconds` after it was read. */
  capture(outcome: CaptureOutcome, seconds: number): void {
    this.captures.inc({ outcome });
    this.captureDuration.observe({ outcome }, seconds);
  }

  /** A gauge read on each scrape (e.g. the captures waiting for a batch). */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /**
   * A gauge read from PostgreSQL on each scrape: left at 0 in a scrape whose read fails or takes longer than
   * QUEUE_READ_TIMEOUT_MS (the database is away), with a warning, so that the other figures still answer.
   */
  storedGauge(name: string, help: string, read: () => Promise<number>): void {
    const logger = this.logger;
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          this.set(await withTimeout(read(), QUEUE_READ_TIMEOUT_MS, 'PostgreSQL'));
        } catch (error) {
          logger.warn(`${name} left out of this scrape: ${(error as Error).message}`);
        }
      },
    });
  }

  /** Counts one delivery attempt and its duration. */
  attempt(outcome: AttemptOutcome, seconds: number): void {
    this.attempts.inc({ outcome });
    this.attemptDuration.observe({ outcome }, seconds);
  }

  /** Adds the figures of another part of this process (a delivery thread) to every scrape. */
  addSource(source: () => Promise<MetricObjectWithValues<MetricValue<string>>[]>): void {
    this.sources.push(source);
  }

  /** The text exposition of every metric, with those of the added sources summed in. */
  async scrape(): Promise<string> {
    if (this.sources.length === 0) return this.registry.metrics();
    const parts = await Promise.all([
      this.registry.getMetricsAsJSON(),
      ...this.sources.map((source) => source()),
    ]);
    return AggregatorRegistry.aggregate(parts).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The queue's counts and its oldest waiting job; null (the gauges are left out) when Redis does not answer. */
  private async readQueue(): Promise<QueueReading | null> {
    try {
      const [counts, [next]] = await withRedisTimeout(
        Promise.all([this.queue.getJobCounts(), this.queue.getWaiting(0, 0)]),
        QUEUE_READ_TIMEOUT_MS,
      );
      const waitingSince = next ? dueSince(next, this.retryDelaysMs) : Date.now();
      return {
        waiting: counts.waiting,
        delayed: counts.delayed,
        active: counts.active,
        oldestWaitingSeconds: Math.max(0, (Date.now() - waitingSince) / 1000),
      };
    } catch (error) {
      this.logger.warn(`delivery queue figures left out of this scrape: ${(error as Error).message}`);
      return null;
    }
  }
}

interface QueueReading {
  waiting: number;
  delayed: number;
  active: number;
  oldestWaitingSeconds: number;
}
