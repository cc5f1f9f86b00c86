import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { setTimeout as sleep } from 'node:timers/promises';
import { isPermanent } from './api-client';
import { CliError, describeError } from './cli-error';

export interface StreamTimings {
  /** No byte (not even a comment) for this long: the connection is dead though not closed. */
  idleMs: number;
  /** The first wait before reconnecting; it doubles on every failed attempt, up to `maxRetryMs`. */
  firstRetryMs: number;
  maxRetryMs: number;
}

/** The server sends `: heartbeat` every 15 s, so 45 s of silence is three missed heartbeats. */
export const STREAM_TIMINGS: StreamTimings = { idleMs: 45_000, firstRetryMs: 500, maxRetryMs: 10_000 };

export type OpenStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;

export interface StreamHandlers {
  /** `resumed`: a reconnection; `serverTime`: the server's clock when it answered. */
  connected(resumed: boolean, serverTime: Date): void;
  /** Once per drop, however many attempts the reconnection takes. */
  disconnected(reason: string): void;
  message(message: EventSourceMessage): void;
}

/** The wait before the next attempt, after `failures` attempts in a row failed. */
export function retryDelay(failures: number, timings: StreamTimings): number {
  return Math.min(timings.maxRetryMs, timings.firstRetryMs * 2 ** failures);
}

interface SessionEnd {
  /** Whether the server accepted this connection before it ended. */
  connected: boolean;
  reason: string;
}

/**
 * Follows a Server-Sent Events stream until stopped: reconnects with backoff after a drop, with
 * `Last-Event-ID` so that the server sends what was missed, and treats a silent connection as dropped.
 * The first connection failing, or a refusal that trying again cannot change (401, 404), ends it with
 * that error.
 */
export class EventStreamFollower {
  private lastEventId?: string;

  constructor(
    private readonly open: OpenStream,
    private readonly handlers: StreamHandlers,
    private readonly timings: StreamTimings = STREAM_TIMINGS,
  ) {}

  async follow(stop: AbortSignal): Promise<void> {
    let everConnected = false;
    let failures = 0;
    while (!stop.aborted) {
      const end = await this.session(stop, everConnected);
      if (stop.aborted) return;
      if (end.connected) {
        everConnected = true;
        failures = 0;
        this.handlers.disconnected(end.reason);
      }
      await sleep(retryDelay(failures++, this.timings), undefined, { signal: stop }).catch(() => undefined);
    }
  }

  /** One connection, from the request to its end. */
  private async session(stop: AbortSignal, resumed: boolean): Promise<SessionEnd> {
    const connection = new AbortController();
    // Covers the wait for the answer too: a server that accepts the connection but never answers.
    const watchdog = setTimeout(() => connection.abort(), this.timings.idleMs);
    let connected = false;
    try {
      const response = await this.open(this.lastEventId, AbortSignal.any([stop, connection.signal]));
      watchdog.refresh();
      connected = true;
      this.handlers.connected(resumed, serverTime(response));
      await this.read(response, () => watchdog.refresh());
      return { connected, reason: 'the server closed the stream' };
    } catch (error) {
      const failure = connection.signal.aborted
        ? new CliError(`no data from the event stream for ${this.timings.idleMs / 1000} s`)
        : error;
      if (!stop.aborted && ((!resumed && !connected) || isPermanent(failure))) throw failure;
      return { connected, reason: describeError(failure) };
    } finally {
      clearTimeout(watchdog);
    }
  }

  private async read(response: Response, onData: () => void): Promise<void> {
    if (!response.body) return;
    const parser = createParser({
      onEvent: (message) => {
        if (message.id) this.lastEventId = message.id;
        this.handlers.message(message);
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of response.body) {
      onData();
      parser.feed(decoder.decode(chunk, { stream: true }));
    }
  }
}

/** The answer's `Date` header (whole seconds), or this machine's clock without one. */
function serverTime(response: Response): Date {
  const date = new Date(response.headers.get('date') ?? Date.now());
  return Number.isNaN(date.getTime()) ? new Date() : date;
}
