import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { CaptureService } from '../events/capture/capture.service';
import { EventChangePublisher } from './event-change.publisher';

/** Announces every captured event to the dashboards as `event.created`. */
@Injectable()
export class CaptureAnnouncer implements OnModuleInit, OnModuleDestroy {
  private subscription?: Subscription;

  constructor(
    private readonly capture: CaptureService,
    private readonly publisher: EventChangePublisher,
  ) {}

  onModuleInit(): void {
    this.subscription = this.capture.captured$.subscribe((event) =>
      this.publisher.publish([
        {
          type: 'event.created',
          endpointId: event.endpointId,
          event: {
            id: event.eventId,
            endpoint_id: event.endpointId,
            status: event.status,
            verification: event.verification,
            method: event.method,
            source_ip: event.sourceIp,
            received_at: event.receivedAt.toISOString(),
            ...(event.body === undefined ? {} : { body: event.body }),
          },
        },
      ]),
    );
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }
}
