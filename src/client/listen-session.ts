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

type ForwardableEvent = Pick<
  CapturedEvent,
  'id' | 'received_at' | 'method' | 'query' | 'headers' | 'body' | 'body_encoding'
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
   * Where a catch-up starts (ISO 8601): `--since` or the server's clock at the first connection, then the
   * receive time of the newest event forwarded. The server's clock comes in whole seconds, so a catch-up
   * before anything was forwarded may also bring events of the second before listen started.
   */
  private catchUpFrom = '';

  constructor(
    private readonly api: HooktrailApi,
    private readonly output: Output,
    private readonly options: ListenOptions,
  ) {
    this.signal = AbortSignal.any([options.stop, this.halt.signal]);
  }

  /** Runs until stopped; rejects when the API refuses the key or the endpoint. */
  async run(): Promise<void> {
    const endpointId = this.options.endpoint.id;
    const follower = new EventStreamFollower(
      (lastEventId, signal) => this.api.openEventStream(endpointId, lastEventId, signal),
      {
        connected: (resumed, serverTime) => this.connected(resumed, serverTime),
        disconnected: (reason) =>
          this.output.record(
            { type: 'disconnected', reason },
            this.output.colors.yellow(`Disconnected: ${reason}; reconnecting…`),
          ),
        message: (message) => {
          const eventId = createdEventId(message);
          if (eventId) this.enqueue(() => this.forwardById(eventId));
        },
      },
    );
    try {
      await follower.follow(this.signal);
    } finally {
      // Whatever ended the following (a stop, a refused reconnection) ends the forwarding too.
      this.halt.abort();
      await this.queue;
    }
    if (this.failure) throw this.failure;
  }

  private connected(resumed: boolean, serverTime: Date): void {
    if (resumed) {
      this.output.record({ type: 'reconnected' }, this.output.colors.green('Reconnected'));
    } else {
      this.catchUpFrom = (this.options.since ?? serverTime).toISOString();
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
    if (resumed || this.options.since) this.enqueue(() => this.catchUp());
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

  /** Forwards, oldest first, the events received since the last one forwarded that were not. */
  private async catchUp(): Promise<void> {
    let missed: CapturedEvent[];
    try {
      missed = await eventsReceivedSince(this.api, this.options.endpoint.id, this.catchUpFrom);
    } catch (error) {
      return this.warnUnlessRefused(error, 'could not list the events received meanwhile');
    }
    for (const event of missed) {
      if (this.signal.aborted) return;
      // The list cuts long bodies; the event's own route has them whole.
      await (event.body_truncated ? this.forwardById(event.id) : this.forward(event));
    }
  }

  private async forwardById(eventId: string): Promise<void> {
    if (this.forwarded.has(eventId)) return;
    let event: ForwardableEvent;
    try {
      ({ event } = await this.api.getEvent(this.options.endpoint.id, eventId));
    } catch (error) {
      return this.warnUnlessRefused(error, `event ${eventId} not forwarded`);
    }
    await this.forward(event);
  }

  private async forward(event: ForwardableEvent): Promise<void> {
    if (this.forwarded.has(event.id)) return;
    const outcome = await forwardToLocal(event, this.options.forwardTo, this.signal);
    if (this.signal.aborted) return;
    this.forwarded.add(event.id);
    if (event.received_at > this.catchUpFrom) this.catchUpFrom = event.received_at;
    this.output.record(
      forwardRecord(event, outcome),
      forwardLine(new Date(), event, outcome, this.output.colors),
    );
  }

  /**
   * A refused key ends listening. Anything else (an event deleted meanwhile, the API unreachable for a
   * moment) is reported and skipped: what was not forwarded is listed again by the catch-up that follows
   * the next reconnection.
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
