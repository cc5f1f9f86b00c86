import type { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import type { AlertScheduler } from '../mail/alert-scheduler.service';
import type { Metrics } from '../metrics/metrics.service';
import type { EventChangePublisher } from '../realtime/event-change.publisher';
import type { AttemptRecorder, DeliveryContext, RecordedAttempt } from './attempt-recorder';
import { ATTEMPTS_IN_PROGRESS_LIMIT, DeliveryAttemptService } from './delivery-attempt.service';
import type { DeliverySender, OutgoingRequest } from '../outbound/delivery-sender';
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

const DELIVERED: RecordedAttempt = {
  deliveryStatus: 'delivered',
  attemptCount: 1,
  eventStatus: 'delivered',
  deadLettered: false,
  endpointId: 'endpoint-1',
};

const answered = {
  send: () =>
    Promise.resolve({ responseCode: 200, responseBody: '', durationMs: 3, error: null, failureKind: null }),
} as unknown as DeliverySender;

function service(
  repository: AttemptRecorder,
  sender: DeliverySender,
  metrics: Partial<Metrics> = {},
): DeliveryAttemptService {
  return new DeliveryAttemptService(
    repository,
    {} as OutboxRepository,
    sender,
    {} as AlertScheduler,
    { publish: () => undefined } as unknown as EventChangePublisher,
    { gauge: () => undefined, attempt: () => undefined, ...metrics } as unknown as Metrics,
    {} as FlowControlGate,
    {} as FifoPumps,
    config,
  );
}

/** Lets every promise and I/O callback due now run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

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
        return Promise.resolve(DELIVERED);
      },
    } as unknown as AttemptRecorder;
    const sut = service(repository, sender, {
      gauge: (_name: string, _help: string, read: () => number) => (inFlight = read),
    });

    await sut.attempt(loaded.id, {
      failedRuns: 0,
      priorAttempts: 0,
      onSent: () => steps.push('sent'),
    });

    expect(sent.map((body) => body.toString())).toEqual(['{"exact":"bytes"}']);
    expect(steps).toEqual(['send: 1 in flight', 'sent', 'record: 0-byte body, 0 in flight']);
  });

  it(`holds ${ATTEMPTS_IN_PROGRESS_LIMIT} attempts at most between their load and their record`, async () => {
    let loads = 0;
    const records: (() => void)[] = [];
    const repository = {
      loadForAttempt: () => {
        loads += 1;
        // Each to a destination of its own: one destination's in-flight slots are not what is bounded here.
        const loaded = delivery('{}');
        return Promise.resolve({
          ...loaded,
          destination: { ...loaded.destination, id: `destination-${loads}` },
        });
      },
      recordAttempt: () => new Promise((resolve) => records.push(() => resolve(DELIVERED))),
    } as unknown as AttemptRecorder;
    const sut = service(repository, answered);
    const runs = { failedRuns: 0, priorAttempts: 0 };

    const attempts = Array.from({ length: ATTEMPTS_IN_PROGRESS_LIMIT + 2 }, (_, n) =>
      sut.attempt(`delivery-${n}`, runs),
    );
    await settle();
    // Every one sent is waiting for its record: the two beyond the bound have not even been loaded.
    expect([loads, records.length]).toEqual([ATTEMPTS_IN_PROGRESS_LIMIT, ATTEMPTS_IN_PROGRESS_LIMIT]);

    records[0]();
    await settle();
    expect([loads, records.length]).toEqual([ATTEMPTS_IN_PROGRESS_LIMIT + 1, ATTEMPTS_IN_PROGRESS_LIMIT + 1]);

    records.slice(1).forEach((record) => record());
    await settle();
    records.slice(ATTEMPTS_IN_PROGRESS_LIMIT + 1).forEach((record) => record());
    await Promise.all(attempts);
    expect(loads).toBe(ATTEMPTS_IN_PROGRESS_LIMIT + 2);
  });
});
