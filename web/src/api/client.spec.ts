import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { api } from './client';
import { ApiError, isAbortError } from './errors';

/**
 * The API client against a real HTTP server whose 200 stops halfway through its JSON body. The request
 * is then aborted (the dashboard aborts a count when the list's filters or total change) or its
 * connection is cut. Either way the call must reject: resolving with no body is what once made the
 * bulk replay bar read `count` of null.
 */
describe('api: a body cut off while it arrives', () => {
  const realFetch = globalThis.fetch;
  let server: Server;
  let base: string;
  let answering: ServerResponse | undefined;
  /** Resolves when the client's fetch has the answer's headers (its body is still on the way). */
  let headersArrived: Promise<void>;

  beforeAll(async () => {
    server = createServer((_request: IncomingMessage, response: ServerResponse) => {
      answering = response;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"count":');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  beforeEach(() => {
    let arrived!: () => void;
    headersArrived = new Promise((resolve) => (arrived = resolve));
    globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
      const response = await realFetch(...args);
      arrived();
      return response;
    };
  });

  afterEach(() => {
    globalThis.fetch = realFetch;
    answering?.destroy();
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('rejects with the AbortError when aborted while the body is read', async () => {
    const controller = new AbortController();
    const answer = api<{ count: number }>(`${base}/count`, { auth: false, signal: controller.signal });
    const settled = answer.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await headersArrived;
    controller.abort();
    const outcome = await settled;
    expect(outcome).not.toHaveProperty('value');
    expect(isAbortError((outcome as { error: unknown }).error)).toBe(true);
  });

  it('rejects as a network error when the connection is cut while the body is read', async () => {
    const answer = api<{ count: number }>(`${base}/count`, { auth: false });
    await headersArrived;
    answering!.destroy();
    const error: unknown = await answer.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(0);
  });
});
