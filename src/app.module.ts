import { type DynamicModule, Module } from '@nestjs/common';
import { AiModule } from './ai/ai.module';
import { coreModules, PROCESSOR_MODULES } from './app-core';
import { AuditModule } from './audit/audit.module';
import { AuthModule } from './auth/auth.module';
import type { AppRole, Environment } from './config/environment';
import { BulkReplayModule } from './delivery/bulk-replay/bulk-replay.module';
import { DeliveryThreadModule } from './delivery/delivery-thread.module';
import { ReplayModule } from './delivery/replay.module';
import { DestinationsModule } from './destinations/destinations.module';
import { EndpointsModule } from './endpoints/endpoints.module';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';
import { IssuesModule } from './issues/issues.module';
import { NotificationChannelsModule } from './notifications/notification-channels.module';
import { EventStreamModule } from './realtime/event-stream.module';
import { StatsModule } from './stats/stats.module';
import { TeamsModule } from './teams/teams.module';

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
      here: PROCESSOR_MODULES,
      thread: [DeliveryThreadModule.forRoot(env)],
      none: [],
    }[workers];
    return {
      module: AppModule,
      imports: [...coreModules(env, processMetrics), HealthModule, ...api, ...processors],
    };
  }
}
