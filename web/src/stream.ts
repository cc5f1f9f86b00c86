/**
 * A Server-Sent Events client on fetch(): unlike EventSource it can send the bearer token in a
 * header (never in the URL). It parses text/event-stream, reconnects with `Last-Event-ID` after a
 * drop (back-off 1 s doubling to 10 s) and treats 45 s of silence (three missed heartbeats) as a drop.
 */

export interface SseMessage {
  /** The `event:` field, `message` when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen so far (the stream's last event id). */
  id: string;
}

/** Incremental parser of the text/event-stream format (WHATWG HTML, "Server-sent events"). */
export class SseParser {
  private buffer = '';
  private dataLines: string[] = [];
  private eventType = '';
  private first = true;
  /** The `id:` of the message being read: it becomes the last event id when the message ends. */
  private idBuffer: string;
  /** The last event id: that of the last message completed (one with no data too). */
  lastEventId: string;

  constructor(lastEventId = '') {
    this.lastEventId = lastEventId;
    this.idBuffer = lastEventId;
  }

  /** Feeds decoded text; returns the messages completed by it. */
  feed(text: string): SseMessage[] {
    let buffer = this.buffer + text;
    if (this.first && buffer.length > 0) {
      this.first = false;
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
    }
    const messages: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const char = buffer[i];
      if (char !== '\n' && char !== '\r') continue;
      // A CR at the very end may be the first half of CRLF: wait for more text.
      if (char === '\r' && i + 1 === buffer.length) break;
      const line = buffer.slice(start, i);
      if (char === '\r' && buffer[i + 1] === '\n') i++;
      start = i + 1;
      this.processLine(line, messages);
    }
    this.buffer = buffer.slice(start);
    return messages;
  }

  private processLine(line: string, messages: SseMessage[]): void {
    if (line === '') {
      // As the standard has it: a message's id counts once the message is complete, not while it is cut
      // off (a drop mid-message resumes before it), and a message with an id and no data sets it too.
      this.lastEventId = this.idBuffer;
      if (this.dataLines.length > 0) {
        messages.push({
          event: this.eventType || 'message',
          data: this.dataLines.join('\n'),
          id: this.lastEventId,
        });
      }
      this.dataLines = [];
      this.eventType = '';
      return;
    }
    if (line.startsWith(':')) return; // comment (heartbeat)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.idBuffer = value;
        break;
      default:
        // `retry` and unknown fields: ignored (the back-off is ours).
        break;
    }
  }
}

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed';

export interface StreamOptions {
  url: string;
  /** A valid access token, or null when logged out (the stream then stops). */
  getToken: () => Promise<string | null>;
  /** Called after a 401: a new access token, or null when the session is over. */
  refreshToken: () => Promise<string | null>;
  onMessage: (message: SseMessage) => void;
  onState?: (state: StreamState) => void;
  /** The stream cannot be opened at all (404: not found or not yours). */
  onFatal?: (status: number) => void;
  minDelayMs?: number;
  maxDelayMs?: number;
  idleTimeoutMs?: number;
}

export interface StreamHandle {
  close: () => void;
  lastEventId: () => string;
}

type Outcome = 'retry' | 'stop';

export function openEventStream(options: StreamOptions): StreamHandle {
  const minDelay = options.minDelayMs ?? 1000;
  const maxDelay = options.maxDelayMs ?? 10_000;
  const idleTimeout = options.idleTimeoutMs ?? 45_000;
  let closed = false;
  let lastEventId = '';
  let delay = minDelay;
  let controller: AbortController | null = null;
  let wake: (() => void) | null = null;

  const setState = (state: StreamState) => options.onState?.(state);

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  const onOnline = () => wake?.();
  window.addEventListener('online', onOnline);

  const request = (token: string, signal: AbortSignal) => {
    const headers: Record<string, string> = { accept: 'text/event-stream', authorization: `Bearer ${token}` };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    return fetch(options.url, { headers, signal, cache: 'no-store' });
  };

  async function connectOnce(): Promise<Outcome> {
    const abort = new AbortController();
    controller = abort;
    let token = await options.getToken();
    if (!token || closed) return 'stop';
    let response = await request(token, abort.signal);
    if (response.status === 401) {
      await response.body?.cancel().catch(() => undefined);
      token = await options.refreshToken();
      if (!token || closed) return 'stop';
      response = await request(token, abort.signal);
    }
    if (response.status === 401 || response.status === 403 || response.status === 404) {
      await response.body?.cancel().catch(() => undefined);
      options.onFatal?.(response.status);
      return 'stop';
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      return 'retry';
    }

    setState('open');
    const openedAt = Date.now();
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser(lastEventId);
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const armIdle = () => {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      idleTimer = setTimeout(() => abort.abort(), idleTimeout);
    };
    armIdle();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        armIdle();
        for (const message of parser.feed(decoder.decode(value, { stream: true }))) {
          lastEventId = parser.lastEventId;
          delay = minDelay;
          if (!closed) options.onMessage(message);
        }
        lastEventId = parser.lastEventId;
      }
    } finally {
      if (idleTimer !== undefined) clearTimeout(idleTimer);
      try {
        reader.releaseLock();
      } catch {
        // already released
      }
    }
    // A connection that stayed up a while resets the back-off even without messages.
    if (Date.now() - openedAt > 10_000) delay = minDelay;
    return 'retry';
  }

  async function run(): Promise<void> {
    setState('connecting');
    while (!closed) {
      let outcome: Outcome = 'retry';
      try {
        outcome = await connectOnce();
      } catch {
        outcome = 'retry'; // network error, abort after silence, refresh failure
      }
      if (closed || outcome === 'stop') break;
      setState('reconnecting');
      await sleep(delay);
      delay = Math.min(delay * 2, maxDelay);
    }
    setState('closed');
    window.removeEventListener('online', onOnline);
  }

  void run();

  return {
    close() {
      if (closed) return;
      closed = true;
      controller?.abort();
      wake?.();
      window.removeEventListener('online', onOnline);
    },
    lastEventId: () => lastEventId,
  };
}
