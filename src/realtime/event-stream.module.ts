import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { EventsModule } from '../events/events.module';
import { CaptureAnnouncer } from './capture-announcer';
import { EventStreamController } from './event-stream.controller';
import { EventStreamGateway } from './event-stream.gateway';
import { EventStreamService } from './event-stream.service';

/** The dashboards' live stream (API processes), and the announcement of captured events. */
@Module({
  imports: [EventsModule, AccessModule],
  controllers: [EventStreamController],
  providers: [EventStreamService, EventStreamGateway, CaptureAnnouncer],
})
export class EventStreamModule {}
