export interface SseMessage {
  id?: string;
  event?: string;
  data: string;
}

/** Reads a Server-Sent Events response the way the dashboard does: fetch, a stream reader, bearer auth. */
export class SseClient {
  readonly messages: SseMessage[] = [];
  readonly comments: string[] = [];
  /** The id of the last message (one with no data too): where a reconnect resumes. */
  lastEventId = '';
  status = 0;
  /** Settles when the stream ends: closed by the server, or by close(). */
  closed: Promise<void> = Promise.resolve();
  private readonly controller = new AbortController();
  private buffer = '';

  static async open(url: string, token: string, lastEventId?: string): Promise<SseClient> {
    const client = new SseClient();
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const response = await fetch(url, { headers, signal: client.controller.signal });
    client.status = response.status;
    if (response.ok && response.body) client.closed = client.read(response.body.getReader());
    return client;
  }

  async waitFor(predicate: (message: SseMessage) => boolean, timeoutMs = 10_000): Promise<SseMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(predicate);
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(`no matching SSE message in ${timeoutMs} ms; got ${JSON.stringify(this.messages)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        this.buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = this.buffer.indexOf('\n\n')) >= 0) {
          this.parse(this.buffer.slice(0, end));
          this.buffer = this.buffer.slice(end + 2);
        }
      }
    } catch {
      // aborted
    }
  }

  private parse(block: string): void {
    const message: SseMessage = { data: '' };
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
      else if (line.startsWith('id: ')) message.id = line.slice(4);
      else if (line.startsWith('event: ')) message.event = line.slice(7);
      else if (line.startsWith('data: ')) message.data += line.slice(6);
    }
    if (message.id !== undefined) this.lastEventId = message.id;
    if (message.data) this.messages.push(message);
  }
}
