import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  at: number;
}

/** How the destination answers one request; `respond` may do anything with the raw response. */
export type Responder = (request: ReceivedRequest, response: ServerResponse) => void;

export const answer =
  (status: number, body = '', headers: Record<string, string> = {}): Responder =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };

/**
 * A real HTTPS server on 127.0.0.1 with the test CA's certificate (trusted via NODE_EXTRA_CA_CERTS).
 * It answers with the queued responders in order, then with `fallback`, and records every request.
 */
export class HttpsDestination {
  readonly received: ReceivedRequest[] = [];
  private readonly queued: Responder[] = [];
  private readonly waiters: { count: number; resolve: () => void }[] = [];
  private server!: Server;

  constructor(private fallback: Responder = answer(200, 'ok')) {}

  static async start(fallback?: Responder): Promise<HttpsDestination> {
    const destination = new HttpsDestination(fallback);
    await destination.listen();
    return destination;
  }

  get url(): string {
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Answers the next requests with these responders, in order. */
  respondWith(...responders: Responder[]): this {
    this.queued.push(...responders);
    return this;
  }

  always(responder: Responder): this {
    this.fallback = responder;
    return this;
  }

  /** Resolves once `count` requests in all have arrived. */
  waitForRequests(count: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`expected ${count} requests, got ${this.received.length} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const done = () => {
        clearTimeout(timer);
        resolve(this.received);
      };
      if (this.received.length >= count) done();
      else this.waiters.push({ count, resolve: done });
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private listen(): Promise<void> {
    const certs = join(__dirname, '..', '.certs');
    this.server = createServer(
      { cert: readFileSync(join(certs, 'ca.pem')), key: readFileSync(join(certs, 'key.pem')) },
      (request, response) => this.handle(request, response),
    );
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      this.received.push(received);
      (this.queued.shift() ?? this.fallback)(received, response);
      for (const waiter of this.waiters.filter((entry) => this.received.length >= entry.count)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
  }
}
