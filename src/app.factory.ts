import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Logger } from 'nestjs-pino';
import { AppModule, workerPlacement } from './app.module';
import { checkRedis } from './common/redis-connection';
import { sendSecurityHeaders } from './common/security-headers';
import { AllExceptionsFilter } from './common/filters/all-exceptions.filter';
import { InputValidationPipe } from './common/pipes/input-validation.pipe';
import type { Environment } from './config/environment';
import { prepareDatabase } from './database/database-bootstrap';
import { CaptureEdge } from './events/capture/capture-route';
import { CaptureRepository } from './events/capture/capture.repository';
import { CaptureService } from './events/capture/capture.service';
import { Metrics } from './metrics/metrics.service';
import { serveDashboard } from './dashboard';
import { checkStoredSecrets } from './secrets/stored-secrets';
import { setupOpenApi } from './openapi';

/** JSON bodies of the API are small; captures have their own limit (CAPTURE_MAX_BODY_BYTES). */
const API_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Node's server.close() closes the connections idle at that moment; a keep-alive connection whose
 * request is still running becomes idle later and would hold the shutdown until its keep-alive
 * time-out. Responses sent while closing therefore say `Connection: close`.
 */
function closeConnectionsWhenClosing(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

/**
 * Builds the service for an environment: checks PostgreSQL and Redis (one clear line when either is
 * down), creates the database when missing, applies migrations, checks that the configured keys open the
 * stored secrets, then creates the Nest application.
 * Used by main.ts and by the e2e tests, so both run the same code. The options are for the tests, which
 * host the service inside Jest: `workersOnMainLoop` (see workerPlacement), and `processMetrics: false`
 * (see PROCESS_METRICS).
 */
export async function createApp(
  env: Environment,
  {
    workersOnMainLoop = false,
    processMetrics = true,
  }: { workersOnMainLoop?: boolean; processMetrics?: boolean } = {},
): Promise<NestFastifyApplication> {
  await Promise.all([prepareDatabase(env.DATABASE_URL), checkRedis(env.REDIS_URL)]);
  await checkStoredSecrets(env);
  const captureEdge = new CaptureEdge();
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(env, { workers: workerPlacement(env.APP_ROLE, workersOnMainLoop), processMetrics }),
    new FastifyAdapter({
      trustProxy: env.TRUST_PROXY > 0 ? env.TRUST_PROXY : false,
      bodyLimit: API_BODY_LIMIT_BYTES,
      return503OnClosing: true,
      serverFactory: captureEdge.serverFactory,
    }),
    { bufferLogs: true, abortOnError: false },
  );
  app.useLogger(app.get(Logger));
  // Here rather than where the SecretBox is made: the delivery thread makes one too, and a start warns once.
  if (!env.ENCRYPTION_KEY)
    app
      .get(Logger)
      .warn(
        'ENCRYPTION_KEY is not set: secrets are sealed under a generated key kept in the database (set ENCRYPTION_KEY in production)',
        'Secrets',
      );
  closeConnectionsWhenClosing(app);
  // The capture URL is answered before Fastify (so without helmet's browser-only headers too).
  if (env.APP_ROLE !== 'worker') {
    captureEdge.serve(app.getHttpAdapter().getInstance(), app.get(CaptureService), app.get(Metrics), env);
    await app.get(CaptureRepository).open();
  }
  sendSecurityHeaders(app.getHttpAdapter().getInstance());
  app.useGlobalPipes(new InputValidationPipe());
  app.useGlobalFilters(new AllExceptionsFilter(app.get(HttpAdapterHost).httpAdapter));
  if (env.APP_ROLE !== 'worker') {
    setupOpenApi(app);
    serveDashboard(app);
  }
  return app;
}
