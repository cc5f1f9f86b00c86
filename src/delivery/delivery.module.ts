import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { IssueTrackingModule } from '../issues/issue-tracking.module';
import {
  DELIVERY_BACKOFF,
  DELIVERY_QUEUE,
  type DeliveryBackoffOptions,
  deliveryBackoff,
} from './delivery-jobs';
import { AttemptsRepository } from './attempts.repository';
import { DeliveryQueue } from './delivery-queue.service';
import { RoutingSignal } from './delivery-router.service';
import { DestinationBacklogs } from './destination-backlogs.service';
import { FIFO_PUMP_QUEUE, FifoPumps } from './fifo-pumps.service';
import { HeldDeliveries } from './held-deliveries.service';
import { OutboxRepository } from './outbox.repository';

const PROVIDERS = [
  DeliveryQueue,
  RoutingSignal,
  AttemptsRepository,
  OutboxRepository,
  DestinationBacklogs,
  HeldDeliveries,
  FifoPumps,
];

/**
 * The delivery queue (with the retry schedule as Bull's backoff strategy) and its producer, the signal that
 * tells the routers of newly captured events, the FIFO destinations' pumps, each destination's backlog read
 * from the outbox, and the release of a resumed destination's held backlog.
 */
@Module({
  imports: [
    // The tracker of issues and auto-pause, called as attempts are recorded.
    IssueTrackingModule,
    BullModule.registerQueueAsync({
      name: DELIVERY_QUEUE,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) => {
        const delays = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
        return {
          settings: {
            backoffStrategies: {
              [DELIVERY_BACKOFF]: (attemptsMade: number, error: Error, options?: DeliveryBackoffOptions) =>
                deliveryBackoff(delays, attemptsMade, error, options),
            },
            // A job whose worker died is handed to another worker once its lock lapses.
            lockDuration: config.get('DELIVERY_TIMEOUT_MS', { infer: true }) + 20_000,
            stalledInterval: 5_000,
            maxStalledCount: 3,
          },
        };
      },
    }),
    // A pump's job runs as long as its destination has deliveries ready; a dead worker's is taken over in ~20 s.
    BullModule.registerQueue({
      name: FIFO_PUMP_QUEUE,
      settings: { lockDuration: 15_000, stalledInterval: 5_000 },
    }),
  ],
  providers: PROVIDERS,
  exports: [BullModule, ...PROVIDERS],
})
export class DeliveryModule {}
