import {
  type DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { writesToTerminal } from '../common/log-format';
import { type Environment, environmentVariables } from '../config/environment';
import { Metrics } from '../metrics/metrics.service';

/** What the main thread and the delivery thread say to each other. */
export type ToDeliveryThread = { type: 'metrics'; id: number } | { type: 'close' };
export type FromDeliveryThread =
  | { type: 'ready' }
  | { type: 'metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] }
  | { type: 'failed'; message: string };

/** The thread's entry point, compiled beside this file's folder (dist/src/delivery-thread.js). */
const ENTRY = join(__dirname, '..', 'delivery-thread.js');
/** A thread that does not answer for its figures within this time is left out of that scrape. */
const METRICS_TIMEOUT_MS = 1000;
/** A thread that stopped by itself is started again after this pause. */
const RESTART_AFTER_MS = 1000;

/** Where the thread's code is and the environment it gets. */
export interface DeliveryThreadOptions {
  entry: string;
  variables: Record<string, string>;
}

const OPTIONS = Symbol('DELIVERY_THREAD_OPTIONS');

/**
 * Runs the queue processors (the delivery engine, the alert mailer, the notification sender, the outbox
 * sweeper) of an APP_ROLE=all process on a worker thread: an event loop of their own, so that forwarding
 * never lengthens the turns of the loop that accepts and answers captures (see workerPlacement). The thread
 * builds the same modules a worker process does, with its own connections. Its figures are merged into this
 * process's /metrics. It is started with the application, closed with it (finishing its running attempts),
 * and started again if it ever stops by itself.
 */
@Injectable()
export class DeliveryThread implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryThread.name);
  private worker?: Worker;
  private closing = false;
  private nextMetricsId = 0;
  private readonly metricsRequests = new Map<
    number,
    (metrics: MetricObjectWithValues<MetricValue<string>>[]) => void
  >();

  constructor(
    @Inject(OPTIONS) private readonly options: DeliveryThreadOptions,
    metrics: Metrics,
  ) {
    metrics.addSource(() => this.threadMetrics());
  }

  /** Resolves once the thread's processors run; rejects when it could not start. */
  onApplicationBootstrap(): Promise<void> {
    return this.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise((resolve) => worker.once('exit', resolve));
    worker.postMessage({ type: 'close' } satisfies ToDeliveryThread);
    await exited;
  }

  private start(): Promise<void> {
    const worker = new Worker(this.options.entry, {
      workerData: { variables: this.options.variables, stdoutIsTTY: writesToTerminal() },
    });
    this.worker = worker;
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: FromDeliveryThread) => {
        if (message.type === 'ready') {
          ready = true;
          resolve();
        } else if (message.type === 'failed') {
          reject(new Error(`the delivery thread could not start: ${message.message}`));
        } else {
          this.metricsRequests.get(message.id)?.(message.metrics);
          this.metricsRequests.delete(message.id);
        }
      });
      worker.on('error', (error) => this.logger.error(`delivery thread error: ${error.message}`));
      worker.on('exit', (code) => {
        if (!ready) reject(new Error(`the delivery thread exited (${code}) before it was ready`));
        if (this.closing || !ready) return;
        this.logger.error(`the delivery thread stopped (exit code ${code}); starting it again`);
        setTimeout(() => {
          this.start().catch((error: Error) => this.logger.error(error.message));
        }, RESTART_AFTER_MS);
      });
    });
  }

  private threadMetrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
    const worker = this.worker;
    if (!worker || this.closing) return Promise.resolve([]);
    const id = this.nextMetricsId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.metricsRequests.delete(id);
        resolve([]);
      }, METRICS_TIMEOUT_MS);
      this.metricsRequests.set(id, (metrics) => {
        clearTimeout(timer);
        resolve(metrics);
      });
      worker.postMessage({ type: 'metrics', id } satisfies ToDeliveryThread);
    });
  }
}

/** The delivery thread of an APP_ROLE=all process. */
@Module({})
export class DeliveryThreadModule {
  static forRoot(env: Environment): DynamicModule {
    return {
      module: DeliveryThreadModule,
      providers: [
        {
          provide: OPTIONS,
          useValue: { entry: ENTRY, variables: environmentVariables(env) } satisfies DeliveryThreadOptions,
        },
        DeliveryThread,
      ],
    };
  }
}
