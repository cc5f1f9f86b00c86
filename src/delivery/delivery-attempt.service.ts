import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type { Environment } from '../config/environment';
import { Places } from '../common/places';
import { Metrics } from '../metrics/metrics.service';
import { AlertScheduler } from '../mail/alert-scheduler.service';
import { EventChangePublisher } from '../realtime/event-change.publisher';
import {
  AttemptRecorder,
  type DeliveryContext,
  type DestinationContext,
  type RecordedAttempt,
} from './attempt-recorder';
import {
  AbandonedAttemptError,
  DeferredDeliveryError,
  RetryableDeliveryError,
  retryDelay,
} from '../jobs/delivery-jobs';
import { DeliverySender, forwardedHeaders, ShutDownError } from '../outbound/delivery-sender';
import { DestinationSlots } from './destination-slots';
import { FifoPumps } from './fifo-pumps.service';
import { FlowControlGate, type GateAnswer } from './flow-control-gate';
import { OutboxRepository } from './outbox.repository';
import { signPayload } from '../outbound/signature-signer';

/** A worker's in-flight attempts (the delivery queue's concurrency): they wait on the network, not on the CPU. */
export const DELIVERY_CONCURRENCY = 200;
/**
 * A worker's attempts between their load and their record, at most. A send gives its place back when its
 * request ends (JobRuns.onSent), so that records slow to commit do not slow the sends; but when the records
 * fall behind (a drain sends faster than PostgreSQL records), the attempts waiting for theirs piled up in
 * memory without bound (6,700 at once, 30 MB of the delivery thread's heap, in a drain after a load). Past
 * this many, the next attempt waits before it loads. It is above what the loads, the sends and the records
 * carry at once (batches of 200, 3 at a time, and 200 sends), so that their batches stay full: at 1,000
 * they did not, and a drain ran 2,111/s against 2,561/s without a bound (BENCHMARKS.md, 2026-12-01).
 */
export const ATTEMPTS_IN_PROGRESS_LIMIT = 2000;
/** The most of them a stuck destination may hold. */
export const DESTINATION_IN_FLIGHT_LIMIT = DELIVERY_CONCURRENCY / 4;
/** A destination whose attempts take this share of `DELIVERY_TIMEOUT_MS` on average is stuck. */
const STUCK_SHARE_OF_TIMEOUT = 0.8;

/** The body of a delivery once its request was sent. */
const SENT_BODY = Buffer.alloc(0);

/** What the worker knows of a delivery job's earlier runs. */
export interface JobRuns {
  /** Runs that ended in an error: failed attempts, deferrals, unexpected errors. */
  failedRuns: number;
  /** Attempts the delivery had when this job was enqueued. */
  priorAttempts: number;
  /** Make its first attempt only (a dispatch job): one already attempted belongs to its own job. */
  firstOnly?: boolean;
  /**
   * Called once the attempt's request has ended (answered, failed or timed out), before its outcome is
   * recorded: the delivery's body has been let go by then.
   */
  onSent?: () => void;
}

/** What a FIFO pump does after a step: look for the next delivery, wait, or stop (nothing to send now). */
export type PumpStep = { then: 'next' } | { then: 'wait'; delayMs: number } | { then: 'sleep' };

/**
 * One attempt of one delivery: load it, hold it while its destination is paused, take one of its
 * destination's in-flight slots (or defer it when a stuck destination has none free), pass its
 * destination's own limits (or defer it), send the original request with our signature headers, record
 * the outcome (delivery, event status, dead-letter outbox) and schedule the alert when it dead-lettered. A
 * FIFO destination's deliveries take the same steps one at a time, in order, driven by its pump
 * (`attemptNext`).
 */
@Injectable()
export class DeliveryAttemptService {
  private readonly logger = new Logger(DeliveryAttemptService.name);
  private readonly retryDelaysMs: number[];
  private readonly slots: DestinationSlots;
  /** Requests open now. */
  private sending = 0;
  /** Attempts between their load and their record. */
  private readonly inProgress = new Places(ATTEMPTS_IN_PROGRESS_LIMIT);

  constructor(
    private readonly recorder: AttemptRecorder,
    private readonly outbox: OutboxRepository,
    private readonly sender: DeliverySender,
    private readonly alerts: AlertScheduler,
    private readonly changes: EventChangePublisher,
    private readonly metrics: Metrics,
    private readonly gate: FlowControlGate,
    private readonly pumps: FifoPumps,
    config: ConfigService<Environment, true>,
  ) {
    metrics.gauge(
      'hooktrail_delivery_attempts_in_flight',
      'Delivery requests this process has open now',
      () => this.sending,
    );
    this.retryDelaysMs = config.get('DELIVERY_RETRY_DELAYS_MS', { infer: true });
    this.slots = new DestinationSlots(
      DESTINATION_IN_FLIGHT_LIMIT,
      STUCK_SHARE_OF_TIMEOUT * config.get('DELIVERY_TIMEOUT_MS', { infer: true }),
      DELIVERY_CONCURRENCY,
    );
  }

  get maxAttempts(): number {
    return this.retryDelaysMs.length + 1;
  }

  /** A delivery job's run (a FIFO destination's deliveries are only handed to its pump). */
  attempt(deliveryId: string, runs: JobRuns): Promise<void> {
    return this.inProgress.run(() => this.attemptNow(deliveryId, runs));
  }

  /**
   * One step of a FIFO destination's pump: attempts its next delivery (or closes it, when the destination
   * was deactivated) once that is due and the destination's limits allow, and says what the pump does next.
   */
  attemptNext(destinationId: string): Promise<PumpStep> {
    return this.inProgress.run(() => this.attemptNextNow(destinationId));
  }

  private async attemptNow(deliveryId: string, runs: JobRuns): Promise<void> {
    const delivery = await this.recorder.loadForAttempt(deliveryId);
    if (!delivery || delivery.status === 'delivered' || delivery.status === 'dead_letter') return;
    if (runs.firstOnly && delivery.attemptCount > 0) return;
    const { destination } = delivery;
    if (destination && !destination.paused && destination.ordering === 'fifo')
      return this.pumps.wake(destination.id);
    const recorded = await this.send(delivery, runs);
    if (!recorded) return;
    await this.report(delivery, recorded);
    if (recorded.deliveryStatus === 'failed')
      throw new RetryableDeliveryError(delivery.id, recorded.attemptCount);
  }

  private async attemptNextNow(destinationId: string): Promise<PumpStep> {
    const next = await this.outbox.fifoHead(destinationId);
    if (!next) return { then: 'sleep' };
    const delivery = await this.recorder.loadForAttempt(next.id);
    // Finished or removed since the look (another pump of a lapsed flag): look again.
    if (!delivery || delivery.status === 'delivered' || delivery.status === 'dead_letter')
      return { then: 'next' };
    const { destination } = delivery;
    if (!destination || destination.ordering !== 'fifo') return { then: 'sleep' };
    // Switched off (paused or not): its deliveries are closed, not held.
    if (!destination.isActive) {
      await this.report(delivery, await this.abandon(delivery, destination));
      return { then: 'next' };
    }
    if (destination.paused) return { then: 'sleep' };
    const dueInMs = this.dueIn(delivery);
    if (dueInMs > 0) return { then: 'wait', delayMs: dueInMs };
    const waitMs = await this.takePlace(delivery.id, destination, false);
    if (waitMs !== null) return { then: 'wait', delayMs: waitMs };
    const recorded = await this.sendAndRecord(delivery, destination);
    if (!recorded) return { then: 'next' };
    await this.report(delivery, recorded);
    return recorded.deliveryStatus === 'failed'
      ? { then: 'wait', delayMs: retryDelay(this.retryDelaysMs, recorded.attemptCount) }
      : { then: 'next' };
  }

  private async send(delivery: DeliveryContext, runs: JobRuns): Promise<RecordedAttempt | null> {
    const { destination } = delivery;
    if (!destination || !destination.isActive) return this.abandon(delivery, destination);
    // A paused destination holds its deliveries: the job ends with no attempt made; resuming enqueues them.
    if (destination.paused) {
      await this.gate.forgetReservation(destination.id, delivery.id, destination);
      return null;
    }
    // More failed runs than this job made attempts: it was deferred before.
    const returning = runs.failedRuns > delivery.attemptCount - runs.priorAttempts;
    const waitMs = await this.takePlace(delivery.id, destination, returning);
    if (waitMs !== null) throw new DeferredDeliveryError(delivery.id, waitMs);
    return this.sendAndRecord(delivery, destination, runs.onSent);
  }

  /** Closes a delivery whose destination was removed, or deactivated during its retries. */
  private abandon(delivery: DeliveryContext, destination: DestinationContext | null) {
    const reason = destination
      ? 'destination is inactive: retries stopped'
      : 'destination was removed: retries stopped';
    return this.recorder.abandon(delivery, reason);
  }

  /**
   * Takes one of the destination's in-flight slots (refused when it is stuck and has none free) and a place
   * under its own limits (rate, `max_in_flight`, FIFO's one at a time, across workers). Answers null, or
   * how long the delivery waits: for its reserved rate slot, or at the destination's pace.
   */
  private async takePlace(
    deliveryId: string,
    destination: DestinationContext,
    returning: boolean,
  ): Promise<number | null> {
    if (!this.slots.tryAcquire(destination.id, returning)) return this.slots.deferFor(destination.id);
    if (!FlowControlGate.applies(destination)) return null;
    let answer: GateAnswer | undefined;
    try {
      answer = await this.gate.acquire(destination.id, deliveryId, destination);
    } finally {
      if (!answer?.granted) this.slots.cancel(destination.id);
    }
    if (answer.granted) return null;
    const limit = FlowControlGate.maxInFlightOf(destination) ?? this.slots.limit;
    return answer.waitMs ?? this.slots.deferWithin(destination.id, limit);
  }

  /**
   * Sends the original request with our signature headers, gives back the places taken, and records the
   * outcome.
   */
  private async sendAndRecord(
    delivery: DeliveryContext,
    destination: DestinationContext,
    onSent?: () => void,
  ): Promise<RecordedAttempt | null> {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string | string[]> = {
      ...forwardedHeaders(delivery.headers),
      'hooktrail-id': delivery.id,
      'hooktrail-timestamp': String(timestamp),
    };
    if (destination.secret)
      headers['hooktrail-signature'] = signPayload(destination.secret, delivery.id, timestamp, delivery.body);
    const at = new Date();
    let outcome;
    this.sending++;
    try {
      outcome = await this.sender.send({
        method: delivery.method,
        url: destination.url,
        query: delivery.query,
        headers,
        body: delivery.body,
      });
    } catch (error) {
      // Cut off by this worker's shutdown: not an attempt (nothing recorded, no retry used); sent again.
      if (error instanceof ShutDownError) throw new AbandonedAttemptError(delivery.id);
      throw error;
    } finally {
      // Recording the outcome needs no body: it is let go now, so that a delivery waiting for its record
      // holds no more memory than its outcome.
      delivery.body = SENT_BODY;
      this.sending--;
      onSent?.();
      this.slots.release(destination.id, Date.now() - at.getTime());
      if (FlowControlGate.applies(destination))
        this.gate
          .release(destination.id, delivery.id, destination)
          .catch((error: Error) => this.logger.debug({ err: error }, 'permit left to lapse'));
    }
    if (outcome.error) this.logger.debug({ deliveryId: delivery.id, error: outcome.error }, 'attempt failed');
    const recorded = await this.recorder.recordAttempt(
      delivery,
      { ...outcome, at },
      {
        maxAttempts: this.maxAttempts,
        nextAttemptAt: this.nextAttemptBound(delivery.attemptCount + 1),
      },
    );
    if (recorded && recorded.deliveryStatus !== 'pending')
      this.metrics.attempt(recorded.deliveryStatus, outcome.durationMs / 1000);
    return recorded;
  }

  /** Tells the dashboard the event's new status, and schedules the alert of an event that dead-lettered. */
  private async report(delivery: DeliveryContext, recorded: RecordedAttempt | null): Promise<void> {
    if (!recorded) return;
    const { eventId: id, endpointId } = delivery;
    this.changes.publish([
      {
        type: 'event.updated',
        endpointId,
        event: { id, endpoint_id: endpointId, status: recorded.eventStatus },
      },
    ]);
    if (recorded.deadLettered) await this.alerts.schedule(recorded.endpointId);
  }

  /** How long until a delivery's next attempt is due (a retry waits its delay, at the short end of the jitter). */
  private dueIn(delivery: DeliveryContext): number {
    if (delivery.attemptCount === 0 || !delivery.lastAttemptedAt) return 0;
    const delay = this.retryDelaysMs[Math.min(delivery.attemptCount, this.retryDelaysMs.length) - 1];
    return delivery.lastAttemptedAt.getTime() + 0.9 * delay - Date.now();
  }

  /** The latest time the next attempt can start (its delay plus the jitter); the sweeper looks after it. */
  private nextAttemptBound(attemptsMade: number): Date | null {
    const delay = this.retryDelaysMs[attemptsMade - 1];
    return delay === undefined ? null : new Date(Date.now() + Math.ceil(delay * 1.1));
  }
}
