import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { limitHeapGrowth } from './common/heap-growth';
import { StartupError } from './common/startup-error';
import { ConfigurationError, type Environment, loadEnvironment } from './config/environment';
import { runAsBackgroundWork } from './delivery/background-priority';

async function bootstrap(): Promise<void> {
  // Before anything else is allocated, and for the delivery thread too (V8's flags are per process).
  limitHeapGrowth();
  if (existsSync('.env')) process.loadEnvFile('.env');
  const env = loadEnvironment(process.env);
  if (env.APP_ROLE === 'worker') runAsBackgroundWork();
  // Loaded only now: loading the application costs about 2 s of CPU, which a worker spends at its lower
  // priority, so that a worker booting beside a busy API process (a replacement after a crash) does not
  // hold up its captures.
  const { createApp } = await import('./app.factory');
  const app = await createApp(env);
  const logger = new Logger('Hooktrail');
  // SIGTERM/SIGINT: stop taking requests, finish the in-flight ones and the running jobs, then exit 0.
  // A line when it begins and one when it is done, so a log shows a stop as well as a start, and how long
  // the work in flight held it.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      const began = Date.now();
      logger.log(`Hooktrail is shutting down (${signal})`);
      app.close().then(
        () => {
          logger.log(`Hooktrail stopped in ${Date.now() - began} ms`);
          process.exit(0);
        },
        (error: unknown) => {
          console.error('Hooktrail did not shut down cleanly:', error);
          process.exit(1);
        },
      );
    });
  }
  await app.listen({ port: env.PORT, host: '0.0.0.0' });
  logger.log(startLine(env));
}

/** The one line a start prints at the info level: where to go next. */
function startLine(env: Environment): string {
  if (env.APP_ROLE === 'worker')
    return `Hooktrail worker is running: /health and /metrics on port ${env.PORT}`;
  const site = env.siteUrl;
  return `Hooktrail is running: dashboard ${site}/ · API docs ${site}/docs · capture URLs ${site}/in/<token>`;
}

bootstrap().catch((error: unknown) => {
  if (error instanceof ConfigurationError || error instanceof StartupError) {
    console.error(error.message);
  } else {
    console.error('Hooktrail failed to start:', error);
  }
  process.exit(1);
});
