import { MikroOrmModule } from '@mikro-orm/nestjs';
import { BullModule } from '@nestjs/bull';
import { type ModuleMetadata, RequestMethod } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { LoggerModule } from 'nestjs-pino';
import { logFormat } from './common/log-format';
import { redisOptions } from './common/redis-connection';
import type { Environment } from './config/environment';
import { ormOptions } from './database/orm-options';
import { BulkReplayWorkerModule } from './delivery/bulk-replay/bulk-replay-worker.module';
import { DeliveryWorkerModule } from './delivery/delivery-worker.module';
import { SearchIndexModule } from './events/search/search-index.module';
import { IngestWorkerModule } from './events/dedup-worker.service';
import { JobsModule } from './jobs/jobs.module';
import { AlertWorkerModule } from './mail/alert-worker.module';
import { MetricsModule } from './metrics/metrics.module';
import { NotificationWorkerModule } from './notifications/notification-worker.module';
import { RealtimePublisherModule } from './realtime/realtime.module';
import { REDIS, RedisModule } from './redis/redis.module';
import { SharedThrottlerStorage } from './redis/shared-throttler-storage';
import { RetentionWorkerModule } from './retention/retention.module';
import { SecretsModule } from './secrets/secrets.module';
import { StatsWorkerModule } from './stats/stats-worker.module';
import { UsersModule } from './users/users.module';

const REDACTED_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization'];

/**
 * The modules every role of the service runs: configuration, logs, data, queues, live changes and metrics
 * (`processMetrics` as in Hosting, app.module.ts). With PROCESSOR_MODULES they are kept apart from the
 * HTTP side's modules (app.module.ts), so that the delivery thread, which runs the processors alone, loads
 * none of the API's code.
 */
export function coreModules(
  env: Environment,
  processMetrics: boolean,
): NonNullable<ModuleMetadata['imports']> {
  return [
    ConfigModule.forRoot({
      isGlobal: true,
      ignoreEnvFile: true,
      skipProcessEnv: true,
      load: [() => ({ ...env, siteUrl: env.siteUrl })],
    }),
    LoggerModule.forRoot({
      // Captures are counted in /metrics and kept in full in PostgreSQL; a log line each would be the
      // hot path's largest cost. The capture route logs its failures itself.
      exclude: [{ path: 'in/{*token}', method: RequestMethod.ALL }],
      pinoHttp: {
        level: env.LOG_LEVEL,
        ...logFormat(env.NODE_ENV),
        redact: { paths: REDACTED_HEADERS.map((name) => `req.headers["${name}"]`), censor: '[redacted]' },
        autoLogging: { ignore: (request) => request.url === '/health' || request.url === '/metrics' },
        serializers: {
          req: (request: {
            id: unknown;
            method: string;
            url: string;
            headers: unknown;
            remoteAddress: string;
          }) => ({
            id: request.id,
            method: request.method,
            url: request.url,
            headers: request.headers,
            remoteAddress: request.remoteAddress,
          }),
        },
      },
    }),
    // The ORM's per-request context only where the ORM is used: the API (the capture URL has its own pool).
    MikroOrmModule.forRoot({
      ...ormOptions(env.DATABASE_URL),
      registerRequestContext: true,
      forRoutesPath: 'api/{*path}',
    }),
    BullModule.forRoot({ redis: redisOptions(env.REDIS_URL), prefix: `${env.REDIS_PREFIX}:bull` }),
    JobsModule,
    ThrottlerModule.forRootAsync({
      inject: [REDIS],
      useFactory: (redis: Redis) => ({
        throttlers: [{ name: 'default', ttl: 60_000, limit: env.AUTH_RATE_LIMIT_PER_MIN }],
        errorMessage: 'too many attempts from this address; retry after the time in Retry-After',
        storage: new SharedThrottlerStorage(redis, `${env.REDIS_PREFIX}:throttle`),
      }),
    }),
    RedisModule,
    SecretsModule,
    RealtimePublisherModule,
    MetricsModule.forRoot(processMetrics),
    UsersModule,
  ];
}

/** The queue processors: the delivery engine and the other background work of a worker. */
export const PROCESSOR_MODULES = [
  DeliveryWorkerModule,
  BulkReplayWorkerModule,
  AlertWorkerModule,
  NotificationWorkerModule,
  SearchIndexModule,
  IngestWorkerModule,
  StatsWorkerModule,
  RetentionWorkerModule,
];
