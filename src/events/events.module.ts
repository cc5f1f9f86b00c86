import { Module } from '@nestjs/common';
import { CaptureWriter, captureRepositoryProvider, dedupClaimsProvider } from './capture/capture-writer';
import { CaptureRulesCache } from './capture/capture-rules.cache';
import { CaptureService } from './capture/capture.service';
import { RoutingSignal } from './capture/routing-signal';
import { EventsController } from './events.controller';
import { EventsRepository } from './events.repository';
import { EventsService } from './events.service';

/**
 * The events API, and the capture path's services. The capture URL itself is answered on Node's HTTP
 * server before Fastify (CaptureEdge, set up by the app factory), which calls CaptureService.
 */
@Module({
  controllers: [EventsController],
  providers: [
    EventsService,
    EventsRepository,
    CaptureService,
    CaptureWriter,
    CaptureRulesCache,
    RoutingSignal,
    captureRepositoryProvider,
    dedupClaimsProvider,
  ],
  exports: [CaptureService],
})
export class EventsModule {}
