import { createServer, get, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { once } from 'node:events';
import { Webhook } from 'standardwebhooks';
import {
  createHttpAgents,
  destinationUrlWithQuery,
  forwardedHeaders,
  IDLE_SOCKET_TIMEOUT_MS,
} from './delivery-sender';
import { signPayload } from './signature-signer';

describe('forwarded request', () => {
  it('appends the original query string to the destination URL', () => {
    expect(destinationUrlWithQuery('https://example.com/hook', '')).toBe('https://example.com/hook');
    expect(destinationUrlWithQuery('https://example.com/hook', 'a=1&b=2')).toBe(
      'https://example.com/hook?a=1&b=2',
    );
    expect(destinationUrlWithQuery('https://example.com/hook?x=y', 'a=1')).toBe(
      'https://example.com/hook?x=y&a=1',
    );
  });

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

describe('keep-alive agents', () => {
  /** The idle time-out the agent gave the one socket it keeps after a request to a server. */
  async function idleTimeoutAfterRequest(serverKeepAliveMs: number): Promise<number | undefined> {
    const server = createServer((_request, response) => response.end('ok'));
    server.keepAliveTimeout = serverKeepAliveMs; // announced as `Keep-Alive: timeout=<seconds>`
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { http: agent } = createHttpAgents(true);
    try {
      const { port } = server.address() as AddressInfo;
      const response = await new Promise<IncomingMessage>((resolve, reject) =>
        get({ host: '127.0.0.1', port, agent }, resolve).on('error', reject),
      );
      response.resume();
      await once(response, 'end');
      await new Promise((resolve) => setImmediate(resolve)); // the socket goes back to the agent
      const free = Object.values(agent.freeSockets).flat() as Socket[];
      expect(free).toHaveLength(1);
      return free[0].timeout;
    } finally {
      agent.destroy();
      server.close();
    }
  }

  it("closes an idle socket a second before the destination's announced keep-alive time-out", async () => {
    expect(await idleTimeoutAfterRequest(5000)).toBe(4000);
  });

  it('keeps an idle socket at most IDLE_SOCKET_TIMEOUT_MS when the destination announces longer', async () => {
    expect(await idleTimeoutAfterRequest(IDLE_SOCKET_TIMEOUT_MS + 60_000)).toBe(IDLE_SOCKET_TIMEOUT_MS);
  });
});
