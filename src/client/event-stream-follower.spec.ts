import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from './api-client';
import { EventStreamFollower, retryDelay, STREAM_TIMINGS, type StreamTimings } from './event-stream-follower';

type Answer = (request: IncomingMessage, response: ServerResponse) => void;

/** A stream server that answers its n-th request with the n-th answer. */
async function streamServer(
  answers: Answer[],
): Promise<{ url: string; server: Server; lastEventIds: string[] }> {
  const lastEventIds: string[] = [];
  const server = createServer((request, response) => {
    lastEventIds.push(String(request.headers['last-event-id'] ?? ''));
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    answers[lastEventIds.length - 1](request, response);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, lastEventIds };
}

const created = (streamId: string, eventId: string) =>
  `id: ${streamId}\nevent: event.created\ndata: {"id":"${eventId}"}\n\n`;

describe(retryDelay.name, () => {
  it('starts at half a second and doubles up to ten', () => {
    const delays = [0, 1, 2, 3, 4, 5, 6].map((failures) => retryDelay(failures, STREAM_TIMINGS));
    expect(delays).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
  });
});

describe(EventStreamFollower.name, () => {
  const fast: StreamTimings = { idleMs: 5000, firstRetryMs: 10, maxRetryMs: 50 };
  let server: Server | undefined;
  afterEach(() => {
    server?.closeAllConnections();
    server?.close();
  });

  /** Follows `url` until the event `untilEventId` arrives; returns what the handlers saw. */
  async function follow(url: string, untilEventId: string, timings: StreamTimings) {
    const seen = { connected: [] as boolean[], disconnected: [] as string[], events: [] as string[] };
    const stop = new AbortController();
    const sut = new EventStreamFollower(
      (lastEventId, signal) =>
        fetch(url, { headers: lastEventId ? { 'last-event-id': lastEventId } : {}, signal }),
      {
        connected: (resumed) => seen.connected.push(resumed),
        disconnected: (reason) => seen.disconnected.push(reason),
        message: (message) => {
          seen.events.push(JSON.parse(message.data).id);
          if (JSON.parse(message.data).id === untilEventId) stop.abort();
        },
      },
      timings,
    );
    await sut.follow(stop.signal);
    return seen;
  }

  it('reconnects with Last-Event-ID after the server closes the stream, reporting the drop once', async () => {
    const stream = await streamServer([
      (_request, response) => response.end(created('1-0', 'a')),
      (_request, response) => response.write(created('2-0', 'b')),
    ]);
    server = stream.server;

    const seen = await follow(stream.url, 'b', fast);

    expect(seen).toEqual({
      connected: [false, true],
      disconnected: ['the server closed the stream'],
      events: ['a', 'b'],
    });
    expect(stream.lastEventIds).toEqual(['', '1-0']);
  });

  it('drops a connection on which nothing arrives, not even a comment, and resumes', async () => {
    const stream = await streamServer([
      (_request, response) => response.write(`: connected\n\n${created('1-0', 'a')}`),
      (_request, response) => response.write(created('2-0', 'b')),
    ]);
    server = stream.server;

    const seen = await follow(stream.url, 'b', { ...fast, idleMs: 200 });

    expect(seen.disconnected).toEqual(['no data from the event stream for 0.2 s']);
    expect(stream.lastEventIds).toEqual(['', '1-0']);
  });

  it('ends with the error when the first connection is refused', async () => {
    const refused = new ApiError(401, 'a valid access token is required');
    const sut = new EventStreamFollower(() => Promise.reject(refused), {
      connected: jest.fn(),
      disconnected: jest.fn(),
      message: jest.fn(),
    });
    await expect(sut.follow(new AbortController().signal)).rejects.toBe(refused);
  });

  it('ends with the error when a reconnection is refused for good', async () => {
    const stream = await streamServer([(_request, response) => response.end(created('1-0', 'a'))]);
    server = stream.server;
    const refused = new ApiError(404, 'endpoint not found');
    let attempts = 0;
    const sut = new EventStreamFollower(
      (_lastEventId, signal) => (attempts++ === 0 ? fetch(stream.url, { signal }) : Promise.reject(refused)),
      { connected: jest.fn(), disconnected: jest.fn(), message: jest.fn() },
      fast,
    );
    await expect(sut.follow(new AbortController().signal)).rejects.toBe(refused);
  });
});
