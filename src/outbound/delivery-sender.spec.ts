import { ConfigService } from '@nestjs/config';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';
import { createHttpDispatcher, DeliverySender, forwardedHeaders, ShutDownError } from './delivery-sender';
import { signPayload } from './signature-signer';

describe('forwarded request', () => {
  it('drops hop-by-hop headers and any hooktrail-* header a sender tried to set, and keeps the rest', () => {
    const headers = forwardedHeaders({
      host: 'hooktrail.example',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'content-length': '10',
      te: 'trailers',
      upgrade: 'h2c',
      'proxy-authorization': 'Basic x',
      expect: '100-continue',
      'hooktrail-signature': 'v1,forged',
      'content-type': 'application/json',
      'stripe-signature': 't=1,v1=abc',
      'webhook-id': 'msg_1',
      'set-cookie': ['a=1', 'b=2'],
    });
    expect(headers).toEqual({
      'content-type': 'application/json',
      'stripe-signature': 't=1,v1=abc',
      'webhook-id': 'msg_1',
      'set-cookie': ['a=1', 'b=2'],
    });
  });

  it('drops the headers a captured Connection header names, once or repeated, in any case', () => {
    expect(
      forwardedHeaders({
        connection: 'keep-alive, X-Hop',
        'x-hop': 'this hop only',
        'x-kept': 'end to end',
      }),
    ).toEqual({ 'x-kept': 'end to end' });
    expect(
      forwardedHeaders({
        connection: ['close', ' X-First ', 'x-second'],
        'X-First': '1',
        'x-second': '2',
        'x-third': '3',
      }),
    ).toEqual({ 'x-third': '3' });
  });
});

describe(signPayload.name, () => {
  it('produces a signature the standardwebhooks library accepts for the raw UTF-8 secret', () => {
    const secret = 'my secret ✓';
    const body = Buffer.from('{"hello":"world"}');
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signPayload(secret, 'delivery-1', timestamp, body);

    const verifier = new Webhook(Buffer.from(secret, 'utf8').toString('base64'));
    expect(() =>
      verifier.verify(body.toString(), {
        'webhook-id': 'delivery-1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      }),
    ).not.toThrow();
    expect(() =>
      verifier.verify('{"hello":"tampered"}', {
        'webhook-id': 'delivery-1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
      }),
    ).toThrow();
  });
});

/** A sender that may dial 127.0.0.1, with a 5-s time-out. */
const localSender = () =>
  new DeliverySender(createHttpDispatcher(true), new ConfigService({ DELIVERY_TIMEOUT_MS: 5_000 }));

/** Starts the server on 127.0.0.1 and answers its origin. */
async function listenLocally(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const postTo = (url: string, headers: Record<string, string> = {}) => ({
  method: 'POST',
  url,
  headers,
  body: Buffer.from('{}'),
});

describe('keep-alive pools', () => {
  it("reuses an idle connection, and closes it before the destination's announced keep-alive time-out", async () => {
    // A destination that announces 2 s and closes an idle connection after exactly 2 s (Node's own server
    // waits longer than it announces, which would hide a client that believes the announcement).
    const connections: Socket[] = [];
    const closedByUs: boolean[] = [];
    const server = createServer((request, response) => {
      const socket = request.socket as Socket & { idle?: NodeJS.Timeout };
      clearTimeout(socket.idle);
      response.setHeader('keep-alive', 'timeout=2');
      response.end('ok', () => (socket.idle = setTimeout(() => socket.destroy(), 2_000)));
    });
    server.keepAliveTimeout = 0; // no time-out of Node's own
    server.on('connection', (socket: Socket) => {
      connections.push(socket);
      let ended = false;
      socket.once('end', () => (ended = true)); // our FIN; the server's timer destroys it without one
      socket.once('close', () => closedByUs.push(ended));
    });
    const origin = await listenLocally(server);
    const sender = localSender();
    try {
      const post = postTo(`${origin}/hook`);
      expect((await sender.send(post)).responseCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await sender.send(post)).responseCode).toBe(200);
      expect(connections).toHaveLength(1);
      await once(connections[0], 'close');
      expect(closedByUs).toEqual([true]);
    } finally {
      await sender.onModuleDestroy();
      server.close();
    }
  });
});

describe('a long answer', () => {
  it('keeps its first KiB and closes the connection instead of reading the rest', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-length': String(8 * 1024 * 1024) });
      response.write(Buffer.alloc(64 * 1024, 'x')); // the rest never comes: only a close ends the wait
    });
    const connections: Socket[] = [];
    server.on('connection', (socket: Socket) => connections.push(socket));
    const origin = await listenLocally(server);
    const sender = localSender();
    try {
      const outcome = await sender.send(postTo(`${origin}/hook`));
      expect(outcome).toMatchObject({ responseCode: 200, responseBody: 'x'.repeat(1024) });
      expect(connections).toHaveLength(1);
      // Closed by our abort (a reset, which `once` would take for a failure): never, if it kept reading.
      await new Promise((resolve) => connections[0].once('close', resolve));
    } finally {
      await sender.onModuleDestroy();
      server.close();
    }
  });
});

describe('what a destination receives', () => {
  interface Received {
    method: string;
    url: string;
    headers: Record<string, string | string[] | undefined>;
    rawHeaders: string[];
    body: Buffer;
  }
  const received: Received[] = [];
  let answer: (response: ServerResponse) => void = (response) => response.end('ok');
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { method = '', url = '', headers, rawHeaders } = request;
      received.push({ method, url, headers, rawHeaders, body: Buffer.concat(chunks) });
      answer(response);
    });
  });
  const sender = localSender();
  let origin = '';

  beforeAll(async () => (origin = await listenLocally(server)));
  afterEach(() => {
    received.length = 0;
    answer = (response) => response.end('ok');
  });
  afterAll(async () => {
    await sender.onModuleDestroy();
    server.close();
  });

  it('gets the method, path and query, every header as given and the exact body bytes', async () => {
    const body = Buffer.from([0x00, 0xff, 0x7b, 0x0a, 0xe2, 0x9c, 0x93]);
    const outcome = await sender.send({
      method: 'PUT',
      url: `${origin}/hook/a%20b?x=1&y=%C3%A9`,
      headers: { 'content-type': 'application/octet-stream', 'x-many': ['one', 'two'] },
      body,
    });
    expect(outcome).toMatchObject({ responseCode: 200, responseBody: 'ok', failureKind: null });
    const [request] = received;
    expect(request).toMatchObject({ method: 'PUT', url: '/hook/a%20b?x=1&y=%C3%A9' });
    expect(request.body.equals(body)).toBe(true);
    expect(request.headers['content-length']).toBe(String(body.length));
    expect(request.headers['content-type']).toBe('application/octet-stream');
    expect(request.rawHeaders.filter((_value, index) => request.rawHeaders[index - 1] === 'x-many')).toEqual([
      'one',
      'two',
    ]);
  });

  it("gets the captured query string exactly as it came, after the URL's own", async () => {
    // Characters a capture takes as they are, which a URL's serialisation would percent-encode.
    const query = `name=O'Brien&q=a"b&tag=<a>&sp=%20`;
    await sender.send({ ...postTo(`${origin}/hook?env=live`), query });
    expect(received[0].url).toBe(`/hook?env=live&${query}`);
  });

  it("sends a URL's user information as Basic credentials, unless the request has its own", async () => {
    const url = `${origin.replace('http://', 'http://hook%20user:p%40ss@')}/hook`;
    await sender.send(postTo(url));
    await sender.send(postTo(url, { Authorization: 'Bearer own' }));
    expect(received.map((request) => request.headers.authorization)).toEqual([
      `Basic ${Buffer.from('hook user:p@ss').toString('base64')}`,
      'Bearer own',
    ]);
  });

  it('passes over an informational head and keeps the final answer', async () => {
    answer = (response) => {
      response.writeEarlyHints({ link: '</style.css>; rel=preload' });
      response.writeHead(202).end('accepted');
    };
    const outcome = await sender.send(postTo(`${origin}/hook`));
    expect(outcome).toMatchObject({ responseCode: 202, responseBody: 'accepted', failureKind: null });
  });

  it('fails an attempt answered with a 100 Continue it did not ask for, and says so', async () => {
    answer = (response) => {
      response.writeContinue();
      response.writeHead(200).end('ok');
    };
    const outcome = await sender.send(postTo(`${origin}/hook`));
    expect(outcome).toMatchObject({ responseCode: null, failureKind: 'connection' });
    expect(outcome.error).toMatch(/100 Continue that was not asked for/);
  });
});

describe('a shutdown', () => {
  it('throws ShutDownError for a request it cuts off before the answer, and for one asked after it', async () => {
    const server = createServer(() => undefined); // never answers
    const arrived = once(server, 'request');
    const origin = await listenLocally(server);
    const sender = localSender();
    try {
      const cutOff = sender.send(postTo(`${origin}/hook`));
      await arrived;
      await sender.onModuleDestroy();
      await expect(cutOff).rejects.toBeInstanceOf(ShutDownError);
      await expect(sender.send(postTo(`${origin}/hook`))).rejects.toBeInstanceOf(ShutDownError);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
