import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { parentPort, workerData } from 'node:worker_threads';
import { coreModules, PROCESSOR_MODULES } from './app-core';
import { loadEnvironment } from './config/environment';
import { runAsBackgroundWork } from './delivery/background-priority';
import type { FromDeliveryThread, ToDeliveryThread } from './delivery/delivery-thread.module';
import { Metrics } from './metrics/metrics.service';

/** The root of the delivery thread: the processors alone (it loads none of the API's code). */
@Module({})
class DeliveryThreadApp {}

/**
 * The delivery thread of an APP_ROLE=all process (DeliveryThread starts it): the same processors as an
 * APP_ROLE=worker process, without HTTP, on this thread's event loop. It answers the main thread's requests
 * for its metrics, and closes (finishing its running attempts) when asked.
 */
async function run(port: NonNullable<typeof parentPort>): Promise<void> {
  runAsBackgroundWork();
  const send = (message: FromDeliveryThread) => port.postMessage(message);
  const env = loadEnvironment({
    ...(workerData as { variables: Record<string, string> }).variables,
    APP_ROLE: 'worker',
  });
  let context;
  try {
    // Node's metrics are the process's: its main thread reports them.
    const root = { module: DeliveryThreadApp, imports: [...coreModules(env, false), ...PROCESSOR_MODULES] };
    context = await NestFactory.createApplicationContext(root, { bufferLogs: true });
    context.useLogger(context.get(Logger));
    await context.init();
  } catch (error) {
    send({ type: 'failed', message: (error as Error).message });
    return;
  }
  const app = context;
  const metrics = app.get(Metrics);
  port.on('message', (message: ToDeliveryThread) => {
    if (message.type === 'metrics') {
      void metrics.registry
        .getMetricsAsJSON()
        .then((values) => send({ type: 'metrics', id: message.id, metrics: values }));
    } else {
      // Exits this thread only, once everything it ran is closed.
      void app.close().finally(() => process.exit(0));
    }
  });
  send({ type: 'ready' });
}

if (parentPort) void run(parentPort);
