import { MikroOrmModule } from '@mikro-orm/nestjs';
import { BullModule } from '@nestjs/bull';
import { type DynamicModule, Module, type ModuleMetadata, RequestMethod } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { ThrottlerModule } from '@nestjs/throttler';
import type Redis from 'ioredis';
import { LoggerModule } from 'nestjs-pino';
import { AiModule } from './ai/ai.module';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import { BulkReplayModule, BulkReplayWorkerModule } from './delivery/bulk-replay/bulk-replay.module';
import { DeliveryThreadModule } from './delivery/delivery-thread.module';
import { DeliveryWorkerModule } from './delivery/delivery-worker.module';
import { AlertWorkerModule } from './mail/alert-worker.module';
import { NotificationChannelsModule } from './notifications/notification-channels.module';
import { NotificationWorkerModule } from './notifications/notification-worker.module';
import { DestinationsModule } from './destinations/destinations.module';
import { EndpointsModule } from './endpoints/endpoints.module';
import { EventsModule } from './events/events.module';
import { IngestWorkerModule } from './ingest/dedup-worker.service';
import { IssuesModule } from './issues/issues.module';
import { SearchIndexModule } from './events/search/search-index.module';
import { ReplayModule } from './delivery/replay.module';
import { EventStreamModule } from './realtime/event-stream.module';
import { RealtimePublisherModule } from './realtime/realtime.module';
import { logFormat } from './common/log-format';
import { redisOptions } from './common/redis-connection';
import type { AppRole, Environment } from './config/environment';
import { ormOptions } from './database/orm-options';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { REDIS, RedisModule } from './redis/redis.module';
import { RetentionWorkerModule } from './retention/retention.module';
import { SharedThrottlerStorage } from './redis/shared-throttler-storage';
import { SecretsModule } from './secrets/secrets.module';
import { StatsModule, StatsWorkerModule } from './stats/stats.module';
import { TeamsModule } from './teams/teams.module';
import { UsersModule } from './users/users.module';

const REDACTED_HEADERS = ['authorization', 'cookie', 'set-cookie', 'x-api-key', 'proxy-authorization'];

/**
 * Where a process runs its queue processors (the delivery engine): on its own event loop (`here`), on a
 * worker thread of their own (`thread`), or nowhere.
 */
export type WorkerPlacement = 'here' | 'thread' | 'none';

/**
 * `all` runs the processors on a thread of their own: an event loop busy forwarding would otherwise make
 * every turn of the HTTP loop long, and Node accepts one new connection per turn, so the capture URL would
 * stop taking connections exactly when it is busiest (README, "When the box is saturated"). `onMainLoop`
 * keeps them on the main loop instead: for a service hosted inside another program (the e2e tests run it
 * inside Jest, on the event loop the tests drive; the tests that start the build as a process of its own
 * run the thread).
 */
export function workerPlacement(role: AppRole, onMainLoop = false): WorkerPlacement {
  if (role === 'api') return 'none';
  if (role === 'worker' || onMainLoop) return 'here';
  return 'thread';
}

/** How a program hosts the service. */
export interface Hosting {
  /** Where the queue processors run (see workerPlacement). */
  workers: WorkerPlacement;
  /** Whether /metrics includes Node's and the process's own metrics (see PROCESS_METRICS). */
  processMetrics: boolean;
}

/**
 * The whole service. APP_ROLE decides what one process runs: `api` the HTTP routes, `worker` the queue
 * processors (with /health and /metrics only), `all` both; every role shares the same modules for data and
 * queues. `hosting` says where the processors run and whether Node's metrics are the service's to report.
 */
@Module({})
export class AppModule {
  static forRoot(env: Environment, { workers, processMetrics }: Hosting): DynamicModule {
    const serveApi = env.APP_ROLE !== 'worker';
    const shared: NonNullable<ModuleMetadata['imports']> = [
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
      HealthModule,
      MetricsModule.forRoot(processMetrics),
      UsersModule,
    ];
    const api = serveApi
      ? [
          AiModule,
          AuthModule,
          EndpointsModule,
          DestinationsModule,
          EventsModule,
          ReplayModule,
          BulkReplayModule,
          EventStreamModule,
          NotificationChannelsModule,
          StatsModule,
          IssuesModule,
          TeamsModule,
          AuditModule,
        ]
      : [];
    const processors = {
      here: [
        DeliveryWorkerModule,
        BulkReplayWorkerModule,
        AlertWorkerModule,
        NotificationWorkerModule,
        SearchIndexModule,
        IngestWorkerModule,
        StatsWorkerModule,
        RetentionWorkerModule,
      ],
      thread: [DeliveryThreadModule.forRoot(env)],
      none: [],
    }[workers];
    return { module: AppModule, imports: [...shared, ...api, ...processors] };
  }
}
