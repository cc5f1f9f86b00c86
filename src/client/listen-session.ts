import type { EventSourceMessage } from 'eventsource-parser';
import { ApiError, type CapturedEvent, type Endpoint, type HooktrailApi } from './api-client';
import { describeError } from './cli-error';
import { eventsReceivedSince } from './event-history';
import { EventStreamFollower } from './event-stream-follower';
import { type ForwardOutcome, forwardToLocal } from './forwarder';
import { forwardLine, localTime } from './human-views';
import type { Output } from './output';
import { RecentIds } from './recent-ids';

/**
 * How many forwarded ids are remembered to skip repeats. Repeats come from the stream's replay after a
 * reconnect and the catch-up list, both bounded by the server's 10-minute window: far fewer events than
 * this for an endpoint a developer listens to, at about 100 bytes each.
 */
const FORWARDED_IDS_KEPT = 10_000;
/**
 * How often, while connected, `listen` also lists the events received since the last one it forwarded:
 * one the stream never announced (the server could not publish it: Redis away for a moment) or that could
 * not be fetched when it was is forwarded then.
 */
const CATCH_UP_INTERVAL_MS = 15_000;
/**
 * A catch-up lists from this long before the newest event forwarded: a capture commits within seconds of
 * its receive time, so one received a little earlier but committed later is listed too.
 */
const CATCH_UP_MARGIN_MS = 5_000;

type ForwardableEvent = Pick<
  CapturedEvent,
  'id' | 'received_at' | 'method' | 'query' | 'headers' | 'body' | 'body_encoding' | 'verification'
>;

export interface ListenOptions {
  endpoint: Endpoint;
  forwardTo: URL;
  /** Forward the events received since then first. */
  since?: Date;
  /** Ends listening (SIGINT, SIGTERM). */
  stop: AbortSignal;
}

/** The id of the new event in an `event.created` message; undefined for anything else. */
export function createdEventId(message: EventSourceMessage): string | undefined {
  // `event.updated` reports a status change of an event already announced: nothing to forward.
  if (message.event !== 'event.created') return undefined;
  try {
    const { id } = JSON.parse(message.data) as Partial<Pick<CapturedEvent, 'id'>>;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `hooktrail listen`: forwards an endpoint's new events to a local URL, one at a time in capture order,
 * each at most once. Every piece of work (forward one event, catch up on a list of them) waits in one
 * queue, so that whatever the stream announces while a catch-up runs is forwarded after it.
 */
export class ListenSession {
  private readonly forwarded = new RecentIds(FORWARDED_IDS_KEPT);
  private readonly halt = new AbortController();
  private readonly signal: AbortSignal;
  private queue: Promise<void> = Promise.resolve();
  private failure?: unknown;
  /**
   * Where listening starts (ISO 8601): `--since` or the server's clock at the first connection. The
   * server's clock comes in whole seconds, so a catch-up before anything was forwarded may also bring
   * events of the second before listen started.
   */
  private startFrom = '';
  /**
   * The receive time up to which every event was forwarded: `startFrom`, then the newest event forwarded,
   * unless one was `behind`.
   */
  private forwardedUpTo = '';
  /** An event could not be fetched or listed: `forwardedUpTo` stays until a catch-up has listed it. */
  private behind = false;
  private connectedNow = false;
  private catchUpQueued = false;
  /** The endpoint as last read: whether it enforces its signature check decides what is forwarded. */
  private endpoint: Endpoint;

  constructor(
    private readonly api: HooktrailApi,
    private readonly output: Output,
    private readonly options: ListenOptions,
  ) {
    this.signal = AbortSignal.any([options.stop, this.halt.signal]);
    this.endpoint = options.endpoint;
  }

  /** Runs until stopped; rejects when the API refuses the key or the endpoint. */
  async run(): Promise<void> {
    const endpointId = this.endpoint.id;
    const follower = new EventStreamFollower(
      (lastEventId, signal) => this.api.openEventStream(endpointId, lastEventId, signal),
      {
        connected: (resumed, serverTime) => this.connected(resumed, serverTime),
        disconnected: (reason) => {
          this.connectedNow = false;
          this.output.record(
            { type: 'disconnected', reason },
            this.output.colors.yellow(`Disconnected: ${reason}; reconnecting…`),
          );
        },
        message: (message) => {
          const eventId = createdEventId(message);
          if (eventId) this.enqueue(() => this.forwardById(eventId));
        },
      },
    );
    const catchUps = setInterval(() => {
      if (this.connectedNow) this.queueCatchUp();
    }, CATCH_UP_INTERVAL_MS);
    try {
      await follower.follow(this.signal);
    } finally {
      // Whatever ended the following (a stop, a refused reconnection) ends the forwarding too.
      clearInterval(catchUps);
      this.halt.abort();
      await this.queue;
    }
    if (this.failure) throw this.failure;
  }

  private connected(resumed: boolean, serverTime: Date): void {
    this.connectedNow = true;
    if (resumed) {
      this.output.record({ type: 'reconnected' }, this.output.colors.green('Reconnected'));
    } else {
      this.startFrom = (this.options.since ?? serverTime).toISOString();
      this.forwardedUpTo = this.startFrom;
      this.output.record(
        {
          type: 'ready',
          endpoint_id: this.options.endpoint.id,
          forward_to: this.options.forwardTo.toString(),
        },
        this.readyLine(),
      );
    }
    // Queued now, before any message of this connection: the stream's own replay, which covers only
    // the server's last 10 minutes, then finds those events already forwarded.
    if (resumed || this.options.since) this.queueCatchUp();
  }

  private readyLine(): string {
    const { endpoint, forwardTo, since } = this.options;
    const history = since ? `, first those received since ${localTime(since)}` : '';
    return (
      `${this.output.colors.green('Ready!')} Forwarding events of ${endpoint.name} (${endpoint.id}) ` +
      `to ${forwardTo}${history}. Ctrl-C to stop.`
    );
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(async () => {
      if (this.signal.aborted) return;
      try {
        await task();
      } catch (error) {
        this.failure ??= error;
        this.halt.abort();
      }
    });
  }

  /** Queues a catch-up, unless one is already waiting its turn. */
  private queueCatchUp(): void {
    if (this.catchUpQueued) return;
    this.catchUpQueued = true;
    this.enqueue(() => {
      this.catchUpQueued = false;
      return this.catchUp();
    });
  }

  /**
   * Reads the endpoint again (its signature check may have changed), then forwards, oldest first, the
   * events received since the last one forwarded (less CATCH_UP_MARGIN_MS) that were not.
   */
  private async catchUp(): Promise<void> {
    this.behind = false;
    let listed: CapturedEvent[];
    try {
      ({ endpoint: this.endpoint } = await this.api.getEndpoint(this.endpoint.id));
      listed = await eventsReceivedSince(this.api, this.endpoint.id, this.listFrom());
    } catch (error) {
      this.behind = true;
      return this.warnUnlessRefused(error, 'could not list the events received meanwhile');
    }
    for (const event of listed) {
      if (this.signal.aborted) return;
      // The list cuts long bodies; the event's own route has them whole.
      await (event.body_truncated ? this.forwardById(event.id) : this.forward(event));
      this.advance(event);
    }
  }

  private listFrom(): string {
    const withMargin = new Date(Date.parse(this.forwardedUpTo) - CATCH_UP_MARGIN_MS).toISOString();
    return withMargin > this.startFrom ? withMargin : this.startFrom;
  }

  private advance(event: Pick<CapturedEvent, 'received_at'>): void {
    if (!this.behind && event.received_at > this.forwardedUpTo) this.forwardedUpTo = event.received_at;
  }

  private async forwardById(eventId: string): Promise<void> {
    if (this.forwarded.has(eventId)) return;
    let event: ForwardableEvent;
    try {
      ({ event } = await this.api.getEvent(this.endpoint.id, eventId));
    } catch (error) {
      this.behind = true;
      return this.warnUnlessRefused(error, `event ${eventId} not forwarded yet`);
    }
    await this.forward(event);
  }

  private async forward(event: ForwardableEvent): Promise<void> {
    if (this.forwarded.has(event.id)) return;
    // As the destinations: a request whose signature failed on an endpoint that enforces it is kept for
    // inspection, never forwarded.
    if (event.verification.status === 'failed' && this.endpoint.verification?.mode === 'enforce') {
      this.forwarded.add(event.id);
      const message = `event ${event.id} not forwarded: ${event.verification.reason} (the endpoint enforces its signature check)`;
      this.output.record(
        { type: 'skipped', event_id: event.id, message },
        this.output.colors.yellow(message),
      );
      return this.advance(event);
    }
    const outcome = await forwardToLocal(event, this.options.forwardTo, this.signal);
    if (this.signal.aborted) return;
    this.forwarded.add(event.id);
    this.advance(event);
    this.output.record(forwardRecord(event, outcome), forwardLine(event, outcome, this.output.colors));
  }

  /**
   * A refused key ends listening. Anything else (an event deleted meanwhile, the API unreachable for a
   * moment) is reported and left to the next catch-up (at the next reconnection, or within
   * CATCH_UP_INTERVAL_MS), which lists it again: until then, what was forwarded moves no cursor past it.
   */
  private warnUnlessRefused(error: unknown, what: string): void {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) throw error;
    const message = `${what}: ${describeError(error)}`;
    this.output.record({ type: 'warning', message }, this.output.colors.yellow(message));
  }
}

function forwardRecord(event: ForwardableEvent, outcome: ForwardOutcome) {
  return {
    type: 'forwarded',
    event_id: event.id,
    method: event.method,
    received_at: event.received_at,
    status: outcome.status ?? null,
    error: outcome.error ?? null,
    duration_ms: outcome.durationMs,
  };
}
