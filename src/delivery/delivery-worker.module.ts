import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { MailModule } from '../mail/mail.module';
import { DeliveryAttemptService } from './delivery-attempt.service';
import { createHttpDispatcher, DeliverySender, HTTP_DISPATCHER } from '../outbound/delivery-sender';
import { DeliveryRouter } from './delivery-router.service';
import { DeliverySweeper } from './delivery-sweeper.service';
import { DeliveryWorker } from './delivery-worker.service';
import { FifoPumpWorker } from './fifo-pump-worker.service';
import { FlowControlGate } from './flow-control-gate';
import { DeliveryModule } from './delivery.module';

/**
 * What a worker runs for deliveries: the router that makes captured events' deliveries, the delivery
 * processor, the FIFO destinations' pumps and the outbox sweeper (MailModule for the alert a dead letter
 * schedules; the alerts' own processor is AlertWorkerModule).
 */
@Module({
  imports: [DeliveryModule, MailModule],
  providers: [
    {
      provide: HTTP_DISPATCHER,
      inject: [ConfigService],
      useFactory: (config: ConfigService<Environment, true>) =>
        createHttpDispatcher(config.get('DELIVERY_ALLOW_PRIVATE_NETWORKS', { infer: true })),
    },
    DeliverySender,
    FlowControlGate,
    DeliveryAttemptService,
    DeliveryRouter,
    DeliveryWorker,
    FifoPumpWorker,
    DeliverySweeper,
  ],
})
export class DeliveryWorkerModule {}
