import { createHash, randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Client } from 'pg';
import { CAPTURE_POOL_SIZE } from '../src/events/capture/capture-writer';
import { api, registerUser, type RegisteredUser } from './support/api-client';
import { routeQueued } from './support/knex-sql';
import { send } from './support/raw-http';
import { POSTGRES_URL, startTestApp, type TestApp } from './support/test-app';
import { expectLimited, startOfSecond, timed } from './support/rate-windows';

interface StoredEvent {
  id: string;
  endpoint_id: string;
  method: string;
  headers: Record<string, string>;
  query: string;
  body_text: string | null;
  body_bytes: Buffer | null;
  source_ip: string | null;
  received_at: Date;
}

async function createEndpoint(
  baseUrl: string,
  user: RegisteredUser,
  name = 'Capture',
): Promise<{ id: string; token: string }> {
  const response = await api(baseUrl, 'POST', '/api/endpoints', { token: user.accessToken, body: { name } });
  expect(response.status).toBe(201);
  return { id: response.body.endpoint.id, token: response.body.endpoint.public_token };
}

describe('capture URL', () => {
  let sut: TestApp;
  let db: Client;
  let user: RegisteredUser;
  let endpoint: { id: string; token: string };

  const storedBytes = (event: StoredEvent) => event.body_bytes ?? Buffer.from(event.body_text ?? '', 'utf8');
  const loadEvent = async (id: string): Promise<StoredEvent> =>
    (await db.query<StoredEvent>('select * from events where id = $1', [id])).rows[0];
  const countEvents = async (where = 'true', values: unknown[] = []): Promise<number> =>
    (await db.query<{ n: number }>(`select count(*)::int as n from events where ${where}`, values)).rows[0].n;
  /** The body as the API returns it, decoded back to bytes. */
  const apiBytes = async (eventId: string): Promise<Buffer> => {
    const response = await api(sut.url, 'GET', `/api/endpoints/${endpoint.id}/events/${eventId}`, {
      token: user.accessToken,
    });
    expect(response.status).toBe(200);
    const { body, body_encoding } = response.body.event;
    return body_encoding === 'base64' ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
  };

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    user = await registerUser(sut.url);
    endpoint = await createEndpoint(sut.url, user);
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it('opens its capture connections at start-up, before the first capture', async () => {
    const captureConnections = async () =>
      (
        await db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and application_name = 'hooktrail-capture'`,
        )
      ).rows[0].n;
    expect(await countEvents()).toBe(0);
    expect(await captureConnections()).toBe(CAPTURE_POOL_SIZE);
  });

  it.each(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])(
    'captures %s with its body byte-exact',
    async (method) => {
      const body = `{"method":"${method}","amount":1999}`;
      const response = await send(sut.url, method, `/in/${endpoint.token}`, {
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      const event = await loadEvent(response.json.id);
      expect(event).toMatchObject({ endpoint_id: endpoint.id, method, body_text: body });
      expect((await apiBytes(event.id)).toString()).toBe(body);
    },
  );

  it('captures HEAD (the answer has no body, the event is stored)', async () => {
    const before = await countEvents(`method = 'HEAD'`);
    const response = await send(sut.url, 'HEAD', `/in/${endpoint.token}?probe=1`);
    expect(response.status).toBe(200);
    expect(await countEvents(`method = 'HEAD'`)).toBe(before + 1);
  });

  const contentTypes: [string, string | undefined, Buffer][] = [
    [
      'JSON',
      'application/json; charset=utf-8',
      Buffer.from('{"type":"invoice.paid","data":{"id":"in_1","amount":1999}}'),
    ],
    [
      'a form',
      'application/x-www-form-urlencoded',
      Buffer.from('type=invoice.paid&amount=1999&note=a+b%26c'),
    ],
    ['text', 'text/plain', Buffer.from('hello\r\nworld  with trailing spaces   ')],
    [
      'XML',
      'application/xml',
      Buffer.from('<?xml version="1.0"?><event type="invoice.paid"><amount>1999</amount></event>'),
    ],
    [
      'multipart',
      'multipart/form-data; boundary=XyZ',
      Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--XyZ--\r\n'),
    ],
    ['octet-stream', 'application/octet-stream', Buffer.from([0x00, 0x01, 0xff, 0xfe, 0x80, 0x0a])],
    ['no content type', undefined, Buffer.from('raw without a content type')],
    ['a malformed content type', 'not a media type', Buffer.from('still captured')],
    ['malformed JSON', 'application/json', Buffer.from('{"unterminated": [1, 2,')],
    ['an empty JSON body', 'application/json', Buffer.alloc(0)],
    ['UTF-8 with non-ASCII text', 'text/plain; charset=utf-8', Buffer.from('Grüße, 東京, 🎉')],
    ['UTF-8 text holding a NUL byte', 'text/plain', Buffer.from('before\u0000after')],
    [
      'text with quotes, backslashes, escape-like sequences and control characters',
      'text/plain',
      Buffer.from('"q" \\ \\u0000 \\ud800 \\" {"a":[1]} \t\u0001\u001f\u007f \u2028\u2029 \r\n'),
    ],
  ];

  it.each(contentTypes)('stores %s exactly as sent', async (_label, contentType, body) => {
    const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
    const response = await send(sut.url, 'POST', `/in/${endpoint.token}`, { headers, body });
    expect(response.status).toBe(200);
    const event = await loadEvent(response.json.id);
    expect(storedBytes(event).equals(body)).toBe(true);
    expect((await apiBytes(event.id)).equals(body)).toBe(true);
    expect(event.headers['content-type']).toBe(contentType);
  });

  it('keeps random binary bytes (NULs, invalid UTF-8) byte-exact and returns them as base64', async () => {
    const body = Buffer.concat([Buffer.from([0x00, 0xc3, 0x28, 0xff]), randomBytes(8192)]);
    const response = await send(sut.url, 'POST', `/in/${endpoint.token}`, {
      headers: { 'content-type': 'application/octet-stream' },
      body,
    });
    expect(response.status).toBe(200);
    const event = await loadEvent(response.json.id);
    expect(event.body_text).toBeNull();
    expect(event.body_bytes?.equals(body)).toBe(true);
    const fromApi = await api(sut.url, 'GET', `/api/endpoints/${endpoint.id}/events/${event.id}`, {
      token: user.accessToken,
    });
    expect(fromApi.body.event.body_encoding).toBe('base64');
    expect(Buffer.from(fromApi.body.event.body, 'base64').equals(body)).toBe(true);
  });

  it('stores a multi-megabyte body below the limit, also when sent chunked', async () => {
    const body = randomBytes(3 * 1024 * 1024);
    for (const chunked of [false, true]) {
      const response = await send(sut.url, 'PUT', `/in/${endpoint.token}`, {
        headers: { 'content-type': 'application/octet-stream' },
        body,
        chunked,
      });
      expect(response.status).toBe(200);
      const event = await loadEvent(response.json.id);
      expect(createHash('sha256').update(storedBytes(event)).digest('hex')).toBe(
        createHash('sha256').update(body).digest('hex'),
      );
    }
  });

  it('captures a GET that carries a body', async () => {
    const response = await send(sut.url, 'GET', `/in/${endpoint.token}`, {
      headers: { 'content-type': 'text/plain' },
      body: 'get body',
    });
    expect(response.status).toBe(200);
    expect((await loadEvent(response.json.id)).body_text).toBe('get body');
  });

  it('keeps every header (lower-case names), the raw query string and the source IP', async () => {
    const response = await send(sut.url, 'POST', `/in/${endpoint.token}?b=2&a=1&a=%20x&flag`, {
      headers: {
        'Content-Type': 'application/json',
        'Stripe-Signature': 't=1700000000,v1=abc',
        'X-Custom': 'Value With Case',
        'X-Forwarded-For': '203.0.113.9',
      },
      body: '{}',
    });
    const event = await loadEvent(response.json.id);
    expect(event.query).toBe('b=2&a=1&a=%20x&flag');
    expect(event.headers).toMatchObject({
      'stripe-signature': 't=1700000000,v1=abc',
      'x-custom': 'Value With Case',
      'x-forwarded-for': '203.0.113.9',
      'content-type': 'application/json',
    });
    // TRUST_PROXY is false by default: X-Forwarded-For is kept as a header but not believed
    expect(event.source_ip).toBe('127.0.0.1');
    expect(Date.now() - event.received_at.getTime()).toBeLessThan(10_000);
    const fromApi = await api(sut.url, 'GET', `/api/endpoints/${endpoint.id}/events/${event.id}`, {
      token: user.accessToken,
    });
    expect(fromApi.body.event).toMatchObject({
      query: 'b=2&a=1&a=%20x&flag',
      source_ip: '127.0.0.1',
      method: 'POST',
    });
  });

  it('keeps every value of a header sent more than once, where Node keeps the first or joins them', async () => {
    const response = await send(sut.url, 'POST', `/in/${endpoint.token}`, {
      headers: {
        'Content-Type': ['application/json', 'text/plain'],
        'User-Agent': ['first/1', 'second/2'],
        'X-Many': ['one', 'two, three'],
        'X-Once': 'only',
      },
      body: '{}',
    });
    const event = await loadEvent(response.json.id);
    expect(event.headers).toMatchObject({
      'content-type': ['application/json', 'text/plain'],
      'user-agent': ['first/1', 'second/2'],
      'x-many': ['one', 'two, three'],
      'x-once': 'only',
    });
  });

  it('answers 404 for an unknown token and stores nothing', async () => {
    const before = await countEvents();
    for (const token of ['x'.repeat(32), 'not a token', 'a'.repeat(99)]) {
      const response = await send(sut.url, 'POST', `/in/${encodeURIComponent(token)}`, { body: 'x' });
      expect(response.status).toBe(404);
      expect(response.json).toMatchObject({ statusCode: 404, error: 'Not Found' });
    }
    expect(await countEvents()).toBe(before);
  });

  it('answers 403 "endpoint is inactive" for an inactive endpoint, stores nothing, and captures again once reactivated', async () => {
    const inactive = await createEndpoint(sut.url, user, 'Paused');
    const patch = (is_active: boolean) =>
      api(sut.url, 'PATCH', `/api/endpoints/${inactive.id}`, {
        token: user.accessToken,
        body: { is_active },
      });
    expect((await patch(false)).status).toBe(200);
    const response = await send(sut.url, 'POST', `/in/${inactive.token}`, { body: '{}' });
    expect(response.status).toBe(403);
    expect(response.json).toEqual({ statusCode: 403, error: 'Forbidden', message: 'endpoint is inactive' });
    expect(await countEvents('endpoint_id = $1', [inactive.id])).toBe(0);
    expect((await patch(true)).status).toBe(200);
    expect((await send(sut.url, 'POST', `/in/${inactive.token}`, { body: '{}' })).status).toBe(200);
    expect(await countEvents('endpoint_id = $1', [inactive.id])).toBe(1);
  });

  it('queues the event for its active destinations before the answer; the router makes one pending delivery each', async () => {
    const target = await createEndpoint(sut.url, user, 'With destinations');
    const urls = [
      'https://hooks.example.com/a',
      'https://hooks.example.com/b',
      'https://hooks.example.com/off',
    ];
    const ids: string[] = [];
    for (const url of urls) {
      const created = await api(sut.url, 'POST', `/api/endpoints/${target.id}/destinations`, {
        token: user.accessToken,
        body: { url },
      });
      ids.push(created.body.destination.id);
    }
    await api(sut.url, 'PATCH', `/api/endpoints/${target.id}/destinations/${ids[2]}`, {
      token: user.accessToken,
      body: { is_active: false },
    });

    const response = await send(sut.url, 'POST', `/in/${target.token}`, { body: '{"n":1}' });
    expect(response.status).toBe(200);
    // queried right after the answer: the row is already committed (this app runs no worker to take it)
    const queued = await db.query(
      'select array(select unnest(destination_ids) order by 1) as destination_ids from routing_queue where event_id = $1',
      [response.json.id],
    );
    expect(queued.rows).toEqual([{ destination_ids: [ids[0], ids[1]].sort() }]);
    await routeQueued(db);
    const { rows } = await db.query(
      `select destination_id, destination_url, dispatch_id, status, attempt_count, next_attempt_at
       from deliveries where event_id = $1 order by destination_url`,
      [response.json.id],
    );
    expect(rows).toEqual([
      expect.objectContaining({
        destination_id: ids[0],
        destination_url: urls[0],
        dispatch_id: response.json.id,
        status: 'pending',
        attempt_count: 0,
      }),
      expect.objectContaining({
        destination_id: ids[1],
        destination_url: urls[1],
        dispatch_id: response.json.id,
        status: 'pending',
        attempt_count: 0,
      }),
    ]);
    expect(rows.every((row) => row.next_attempt_at instanceof Date)).toBe(true);
    const event = await api(sut.url, 'GET', `/api/endpoints/${target.id}/events/${response.json.id}`, {
      token: user.accessToken,
    });
    expect(event.body.event.status).toBe('received');
    expect(event.body.event.deliveries).toHaveLength(2);
    expect(event.body.event.deliveries[0]).toMatchObject({
      event_id: response.json.id,
      status: 'pending',
      attempt_count: 0,
      response_code: null,
      last_attempted_at: null,
      attempts: [],
    });
  });

  it('routes an event to the destinations active at its capture that are still active: none added or switched off since', async () => {
    const target = await createEndpoint(sut.url, user, 'Changed before routing');
    const destinations = `/api/endpoints/${target.id}/destinations`;
    const add = async (url: string) =>
      (await api(sut.url, 'POST', destinations, { token: user.accessToken, body: { url } })).body.destination
        .id as string;
    const kept = await add('https://hooks.example.com/kept');
    const switchedOff = await add('https://hooks.example.com/switched-off');
    const response = await send(sut.url, 'POST', `/in/${target.token}`, { body: '{"n":2}' });
    expect(response.status).toBe(200);
    await api(sut.url, 'PATCH', `${destinations}/${switchedOff}`, {
      token: user.accessToken,
      body: { is_active: false },
    });
    await add('https://hooks.example.com/added-after');

    await routeQueued(db);
    const { rows } = await db.query('select destination_id from deliveries where event_id = $1', [
      response.json.id,
    ]);
    expect(rows).toEqual([{ destination_id: kept }]);
  });
  it('answers each of many concurrent captures with its own event (group commit keeps them apart)', async () => {
    const other = await createEndpoint(sut.url, user, 'Concurrent');
    const inactive = await createEndpoint(sut.url, user, 'Concurrent inactive');
    await api(sut.url, 'PATCH', `/api/endpoints/${inactive.id}`, {
      token: user.accessToken,
      body: { is_active: false },
    });
    const requests = Array.from({ length: 300 }, (_, index) => {
      const token = index % 10 === 3 ? inactive.token : index % 10 === 7 ? 'u'.repeat(32) : other.token;
      return { index, token, body: `{"index":${index}}` };
    });
    const responses = await Promise.all(
      requests.map((item) =>
        send(sut.url, 'POST', `/in/${item.token}`, {
          headers: { 'content-type': 'application/json' },
          body: item.body,
        }),
      ),
    );
    const stored = new Map<string, string>();
    responses.forEach((response, index) => {
      const { token, body } = requests[index];
      const expected = token === inactive.token ? 403 : token === other.token ? 200 : 404;
      expect(response.status).toBe(expected);
      if (expected === 200) stored.set(response.json.id, body);
    });
    const { rows } = await db.query<{ id: string; body_text: string }>(
      'select id, body_text from events where endpoint_id = $1',
      [other.id],
    );
    expect(rows).toHaveLength(stored.size);
    for (const row of rows) expect(row.body_text).toBe(stored.get(row.id));
    expect(await countEvents('endpoint_id = $1', [inactive.id])).toBe(0);
  });

  it('keeps capture URLs out of the Nest pipeline: no bearer token needed, and no JSON parsing', async () => {
    const response = await send(sut.url, 'POST', `/in/${endpoint.token}`, {
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-jwt' },
      body: 'not json at all',
    });
    expect(response.status).toBe(200);
  });
});

describe('capture URL limits and proxies', () => {
  const LIMIT = 1024;
  let sut: TestApp;
  let db: Client;
  let token: string;
  let endpointId: string;

  beforeAll(async () => {
    sut = await startTestApp({
      APP_ROLE: 'api',
      CAPTURE_MAX_BODY_BYTES: String(LIMIT),
      TRUST_PROXY: 'true',
      CAPTURE_RATE_LIMIT_PER_S: '3',
    });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    const user = await registerUser(sut.url);
    const created = await createEndpoint(sut.url, user);
    token = created.token;
    endpointId = created.id;
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  const countEvents = async () =>
    (
      await db.query<{ n: number }>('select count(*)::int as n from events where endpoint_id = $1', [
        endpointId,
      ])
    ).rows[0].n;
  it('stores a body of exactly CAPTURE_MAX_BODY_BYTES and refuses one byte more with a JSON 413, storing nothing', async () => {
    await startOfSecond();
    const atLimit = await send(sut.url, 'POST', `/in/${token}`, { body: randomBytes(LIMIT) });
    expect(atLimit.status).toBe(200);
    const before = await countEvents();
    for (const chunked of [false, true]) {
      const over = await send(sut.url, 'POST', `/in/${token}`, { body: randomBytes(LIMIT + 1), chunked });
      expect(over.status).toBe(413);
      expect(over.json).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
      expect(over.json.message).toContain(String(LIMIT));
    }
    await startOfSecond();
    const overGet = await send(sut.url, 'GET', `/in/${token}`, { body: randomBytes(LIMIT + 1) });
    expect(overGet.status).toBe(413);
    expect(await countEvents()).toBe(before);
  });

  it('takes the source IP from X-Forwarded-For when TRUST_PROXY=true: the entry the one proxy in front added', async () => {
    await startOfSecond();
    const answers = [
      await send(sut.url, 'POST', `/in/${token}`, {
        headers: { 'x-forwarded-for': '203.0.113.9' },
        body: '{}',
      }),
      // A client's own entry, to the left of the proxy's, is not believed.
      await send(sut.url, 'POST', `/in/${token}`, {
        headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.10' },
        body: '{}',
      }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const { rows } = await db.query('select id, source_ip from events where id = any($1)', [
      answers.map((answer) => answer.json.id),
    ]);
    const sourceIp = new Map(rows.map((row) => [row.id, row.source_ip]));
    expect(answers.map((answer) => sourceIp.get(answer.json.id))).toEqual(['203.0.113.9', '203.0.113.10']);
  });

  it('answers 429 with Retry-After beyond CAPTURE_RATE_LIMIT_PER_S for one endpoint, storing nothing', async () => {
    await startOfSecond();
    const before = await countEvents();
    const { result: responses, windows } = await timed(() =>
      Promise.all(Array.from({ length: 5 }, () => send(sut.url, 'POST', `/in/${token}`, { body: '{}' }))),
    );
    const passed = expectLimited(responses, 3, windows);
    const limited = responses.find((response) => response.status === 429);
    expect(limited?.headers['retry-after']).toBe('1');
    expect(limited?.json).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect(await countEvents()).toBe(before + passed);
  });
});

/** A TCP relay to PostgreSQL that the test can cut, to make the database unreachable for the running service. */
class CuttableRelay {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async start(): Promise<void> {
    const upstream = new URL(POSTGRES_URL);
    this.server = createServer((client) => {
      const server = connect(Number(upstream.port || 5432), upstream.hostname);
      for (const socket of [client, server]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(server).pipe(client);
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
    this.server = null;
  }
}

describe('capture URL while PostgreSQL is unreachable', () => {
  let relay: CuttableRelay;
  let sut: TestApp;
  let token: string;
  let endpointId: string;

  beforeAll(async () => {
    relay = new CuttableRelay();
    await relay.start();
    const name = `hooktrail_test_pgdown_${randomBytes(4).toString('hex')}`;
    sut = await startTestApp({
      APP_ROLE: 'api',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${relay.port}/${name}`,
    });
    const user = await registerUser(sut.url);
    ({ token, id: endpointId } = await createEndpoint(sut.url, user));
    expect((await send(sut.url, 'POST', `/in/${token}`, { body: '{"warm":true}' })).status).toBe(200);
  });
  afterAll(async () => {
    await sut.close();
    await relay.cut();
  });

  it('answers 503 (never 2xx) while the database is away, and captures again once it is back', async () => {
    await relay.cut();
    const down = await Promise.all(
      Array.from({ length: 5 }, (_, n) => send(sut.url, 'POST', `/in/${token}`, { body: `{"n":${n}}` })),
    );
    for (const response of down) {
      expect(response.status).toBe(503);
      expect(response.json).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
    }
    await relay.start();
    const back = await send(sut.url, 'POST', `/in/${token}`, { body: '{"back":true}' });
    expect(back.status).toBe(200);
    const db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    const { rows } = await db.query(
      'select body_text from events where endpoint_id = $1 order by received_at',
      [endpointId],
    );
    await db.end();
    expect(rows.map((row) => row.body_text)).toEqual(['{"warm":true}', '{"back":true}']);
  });
});
