import { Global, Module } from '@nestjs/common';
import { EventChangePublisher } from './event-change.publisher';

/** Publishing side of the real-time layer, used by capture (API) and delivery (worker) alike. */
@Global()
@Module({ providers: [EventChangePublisher], exports: [EventChangePublisher] })
export class RealtimePublisherModule {}
