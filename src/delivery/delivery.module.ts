import { Module } from '@nestjs/common';
import { IssueTrackingModule } from '../issues/issue-tracking.module';
import { AttemptRecorder } from './attempt-recorder';
import { DeliveryQueue } from './delivery-queue.service';
import { DestinationBacklogs } from './destination-backlogs.service';
import { FifoPumps } from './fifo-pumps.service';
import { HeldDeliveries } from './held-deliveries.service';
import { OutboxRepository } from './outbox.repository';

const PROVIDERS = [
  DeliveryQueue,
  AttemptRecorder,
  OutboxRepository,
  DestinationBacklogs,
  HeldDeliveries,
  FifoPumps,
];

/**
 * The delivery queue's producer (the queue, with the retry schedule as Bull's backoff strategy, is
 * JobsModule's), the FIFO destinations' pumps, each destination's backlog read from the outbox, and the
 * release of a resumed destination's held backlog.
 */
@Module({
  imports: [
    // The tracker of issues and auto-pause, called as attempts are recorded.
    IssueTrackingModule,
  ],
  providers: PROVIDERS,
  exports: PROVIDERS,
})
export class DeliveryModule {}
