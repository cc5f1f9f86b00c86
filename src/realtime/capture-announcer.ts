import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { type CapturedEvent, CaptureService } from '../events/capture/capture.service';
import { type EventChange, EventChangePublisher } from './event-change.publisher';

/**
 * The `event.created` summary of a capture. Its JSON is made when a flush writes it, which happens only
 * for an endpoint that a dashboard watches: the body is decoded and the time formatted then, not for every
 * capture (EventChangePublisher drops the others' changes unwritten).
 */
function createdSummary(event: CapturedEvent): EventChange['event'] {
  return {
    id: event.eventId,
    endpoint_id: event.endpointId,
    status: event.status,
    toJSON: () => ({
      id: event.eventId,
      endpoint_id: event.endpointId,
      status: event.status,
      verification: event.verification,
      method: event.method,
      source_ip: event.sourceIp,
      received_at: event.receivedAt.toISOString(),
      ...(event.body === undefined ? {} : { body: event.body.toString('utf8') }),
    }),
  };
}

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
        { type: 'event.created', endpointId: event.endpointId, event: createdSummary(event) },
      ]),
    );
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }
}
