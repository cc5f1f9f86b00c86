import { ConfigService } from '@nestjs/config';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, createServer as createNetServer, type Socket } from 'node:net';
import { createHttpDispatcher, DeliverySender, failureSummary } from './delivery-sender';

const TIMEOUT_MS = 300;

/** A plain HTTP server on 127.0.0.1 answering every request with `status` (or never, for null). */
async function startServer(status: number | null): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => {
    if (status !== null) response.writeHead(status).end('answer');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function senderFor(allowPrivateNetworks: boolean): DeliverySender {
  return new DeliverySender(
    createHttpDispatcher(allowPrivateNetworks),
    new ConfigService({ DELIVERY_TIMEOUT_MS: TIMEOUT_MS }),
  );
}

const post = (url: string) => ({ method: 'POST', url, headers: {}, body: Buffer.from('{}') });

describe(`${DeliverySender.name}: the kind of a failed attempt`, () => {
  let sut: DeliverySender;
  const servers: Server[] = [];

  beforeEach(() => (sut = senderFor(true)));
  afterEach(async () => {
    await sut.onModuleDestroy();
    await Promise.all(servers.splice(0).map(closeServer));
  });

  async function serve(status: number | null): Promise<number> {
    const { server, port } = await startServer(status);
    servers.push(server);
    return port;
  }

  it.each([
    [200, null],
    [204, null],
    [302, 'http_4xx'],
    [404, 'http_4xx'],
    [429, 'http_4xx'],
    [500, 'http_5xx'],
    [503, 'http_5xx'],
  ])('a %i response is %s', async (status, kind) => {
    const port = await serve(status);
    const outcome = await sut.send(post(`http://127.0.0.1:${port}/hook`));
    expect(outcome.responseCode).toBe(status);
    expect(outcome.failureKind).toBe(kind);
  });

  it('a destination that does not answer in time is a timeout', async () => {
    const port = await serve(null);
    const outcome = await sut.send(post(`http://127.0.0.1:${port}/hook`));
    expect(outcome).toMatchObject({ responseCode: null, failureKind: 'timeout' });
    expect(failureSummary(outcome)).toBe(`timed out after ${TIMEOUT_MS} ms`);
  });

  it("a TLS handshake that never ends is a timeout at DELIVERY_TIMEOUT_MS, not undici's 10-s connection failure", async () => {
    const sockets = new Set<Socket>();
    const silent = createNetServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const patient = new DeliverySender(
      createHttpDispatcher(true),
      new ConfigService({ DELIVERY_TIMEOUT_MS: 12_000 }),
    );
    try {
      const { port } = silent.address() as AddressInfo;
      const outcome = await patient.send(post(`https://127.0.0.1:${port}/hook`));
      expect(outcome).toMatchObject({ responseCode: null, failureKind: 'timeout' });
      expect(failureSummary(outcome)).toBe('timed out after 12000 ms');
    } finally {
      await patient.onModuleDestroy();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 20_000);

  it('clears every timer it starts once a request is answered or has failed', async () => {
    // The sender's own timers, not the process's: a timer left by another file in this Jest worker may
    // fire in the middle of the test, so counting every active timer is not a measure of the sender.
    // Those that hold the process: undici's connections keep an unreferenced timer of their own.
    const answering = await serve(200);
    const refusing = await serve(200);
    await closeServer(servers.pop()!);
    const started = jest.spyOn(global, 'setTimeout');
    const cleared = jest.spyOn(global, 'clearTimeout');
    try {
      await sut.send(post(`http://127.0.0.1:${answering}/hook`));
      await sut.send(post(`http://127.0.0.1:${refusing}/hook`));
      const timers = started.mock.results
        .map((result) => result.value as NodeJS.Timeout)
        .filter((timer) => timer.hasRef());
      expect(timers.length).toBeGreaterThan(0);
      expect(cleared.mock.calls.map(([timer]) => timer as unknown)).toEqual(expect.arrayContaining(timers));
    } finally {
      started.mockRestore();
      cleared.mockRestore();
    }
  });

  it('a port nobody listens on is a connection failure', async () => {
    const port = await serve(200);
    await closeServer(servers.pop()!);
    const outcome = await sut.send(post(`http://127.0.0.1:${port}/hook`));
    expect(outcome).toMatchObject({ responseCode: null, failureKind: 'connection' });
    expect(outcome.error).toMatch(/^ECONNREFUSED/);
  });

  it('an https:// URL on a server that does not speak TLS is a tls failure', async () => {
    const port = await serve(200);
    const outcome = await sut.send(post(`https://127.0.0.1:${port}/hook`));
    expect(outcome).toMatchObject({ responseCode: null, failureKind: 'tls' });
  });

  it('a name that does not resolve is a dns failure', async () => {
    const outcome = await sut.send(post('https://no-such-host.invalid/hook'));
    expect(outcome).toMatchObject({ responseCode: null, failureKind: 'dns' });
  });

  it.each([
    ['a literal private address', '127.0.0.1'],
    ['a name that resolves to one', 'localhost'],
  ])('%s refused by the SSRF guard is refused_address', async (_label, host) => {
    const port = await serve(200);
    const guarded = senderFor(false);
    try {
      const outcome = await guarded.send(post(`http://${host}:${port}/hook`));
      expect(outcome).toMatchObject({ responseCode: null, failureKind: 'refused_address' });
      expect(failureSummary(outcome)).toMatch(
        /^refused: the destination resolves to a private or reserved address \((127\.0\.0\.1|::1)\); set DELIVERY_ALLOW_PRIVATE_NETWORKS=true/,
      );
    } finally {
      await guarded.onModuleDestroy();
    }
  });

  it('summarises an HTTP failure by its status and name', () => {
    expect(failureSummary({ responseCode: 503, error: null })).toBe('HTTP 503 Service Unavailable');
    expect(failureSummary({ responseCode: 301, error: 'redirects are not followed' })).toBe(
      'HTTP 301 Moved Permanently: redirects are not followed',
    );
    expect(failureSummary({ responseCode: 599, error: null })).toBe('HTTP 599');
  });
});
