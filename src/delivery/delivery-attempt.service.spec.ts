import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import type { AlertScheduler } from '../mail/alert-scheduler.service';
import type { Metrics } from '../metrics/metrics.service';
import type { EventChangePublisher } from '../realtime/event-change.publisher';
import type { AttemptsRepository, DeliveryContext, RecordedAttempt } from './attempts.repository';
import { DeliveryAttemptService } from './delivery-attempt.service';
import type { DeliverySender, OutgoingRequest } from './delivery-sender';
import type { FifoPumps } from './fifo-pumps.service';
import type { FlowControlGate } from './flow-control-gate';
import type { OutboxRepository } from './outbox.repository';

const config = {
  get: (key: keyof Environment) =>
    ({ DELIVERY_RETRY_DELAYS_MS: [5000], DELIVERY_TIMEOUT_MS: 10_000 })[key as string],
} as unknown as ConfigService<Environment, true>;

function delivery(body: string): DeliveryContext {
  return {
    id: 'delivery-1',
    eventId: 'event-1',
    endpointId: 'endpoint-1',
    status: 'pending',
    attemptCount: 0,
    lastAttemptedAt: null,
    destination: {
      id: 'destination-1',
      url: 'https://example.test/hooks',
      secret: null,
      isActive: true,
      rateLimit: null,
      rateLimitPeriod: 'second',
      maxInFlight: null,
      paused: false,
      ordering: 'none',
    },
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    query: '',
    body: Buffer.from(body),
  };
}

describe(DeliveryAttemptService.name, () => {
  it('sends the body whole, counted in flight while open, then lets it go before the record', async () => {
    const loaded = delivery('{"exact":"bytes"}');
    const steps: string[] = [];
    const sent: Buffer[] = [];
    let inFlight = () => NaN;
    const sender = {
      send: (request: OutgoingRequest) => {
        sent.push(Buffer.from(request.body));
        steps.push(`send: ${inFlight()} in flight`);
        return Promise.resolve({
          responseCode: 200,
          responseBody: '',
          durationMs: 3,
          error: null,
          failureKind: null,
        });
      },
    } as unknown as DeliverySender;
    const repository = {
      loadForAttempt: () => Promise.resolve(loaded),
      recordAttempt: (recorded: DeliveryContext) => {
        steps.push(`record: ${recorded.body.length}-byte body, ${inFlight()} in flight`);
        return Promise.resolve({
          deliveryStatus: 'delivered',
          attemptCount: 1,
          eventStatus: 'delivered',
          deadLettered: false,
          endpointId: 'endpoint-1',
        } satisfies RecordedAttempt);
      },
    } as unknown as AttemptsRepository;
    const sut = new DeliveryAttemptService(
      repository,
      {} as OutboxRepository,
      sender,
      {} as AlertScheduler,
      { publish: () => undefined } as unknown as EventChangePublisher,
      {
        gauge: (_name: string, _help: string, read: () => number) => (inFlight = read),
        attempt: () => undefined,
      } as unknown as Metrics,
      {} as FlowControlGate,
      {} as FifoPumps,
      config,
    );

    await sut.attempt(loaded.id, {
      failedRuns: 0,
      priorAttempts: 0,
      onSent: () => steps.push('sent'),
    });

    expect(sent.map((body) => body.toString())).toEqual(['{"exact":"bytes"}']);
    expect(steps).toEqual(['send: 1 in flight', 'sent', 'record: 0-byte body, 0 in flight']);
  });
});
