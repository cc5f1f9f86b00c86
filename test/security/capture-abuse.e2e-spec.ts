import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { api, registerUser, type RegisteredUser } from '../support/api-client';
import { send } from '../support/raw-http';
import { type ServiceProcess, spawnService, stopService } from '../support/service-process';
import { startTestApp, type TestApp } from '../support/test-app';
import { expectLimited, startOfSecond, timed } from '../support/rate-windows';

const LIMIT = 4096;
const SOAK = process.env.SOAK === '1';

interface CaptureSetup {
  sut: TestApp;
  db: Client;
  user: RegisteredUser;
}

async function setUp(overrides: Record<string, string>): Promise<CaptureSetup> {
  const sut = await startTestApp({ APP_ROLE: 'api', ...overrides });
  const db = new Client({ connectionString: sut.env.DATABASE_URL });
  await db.connect();
  return { sut, db, user: await registerUser(sut.url) };
}

async function tearDown(setup: CaptureSetup): Promise<void> {
  await setup.db.end();
  await setup.sut.close();
}

async function newEndpoint({ sut, user }: CaptureSetup): Promise<{ id: string; token: string }> {
  const created = await api(sut.url, 'POST', '/api/endpoints', {
    token: user.accessToken,
    body: { name: 'Target' },
  });
  return { id: created.body.endpoint.id, token: created.body.endpoint.public_token };
}

async function countEvents({ db }: CaptureSetup, endpointId?: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'select count(*)::int as n from events where $1::uuid is null or endpoint_id = $1',
    [endpointId ?? null],
  );
  return rows[0].n;
}

/** Waits for the start of a clock second, so that a burst falls into one rate-limit window. */

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** `count` UTF-8 bytes of text, with two-byte characters, ending on a character boundary. */
const utf8OfLength = (count: number) =>
  Buffer.from(`${'é'.repeat(Math.floor(count / 2))}${count % 2 ? 'a' : ''}`);

describe('hostile capture bodies', () => {
  let setup: CaptureSetup;
  beforeAll(async () => {
    setup = await setUp({ CAPTURE_MAX_BODY_BYTES: String(LIMIT) });
  });
  afterAll(() => tearDown(setup));

  const bodies: [string, string, Buffer][] = [
    ['malformed JSON', 'application/json', Buffer.from('{"unterminated": [1, 2,')],
    [
      'invalid UTF-8 with NUL bytes',
      'application/json',
      Buffer.from([0x7b, 0xc3, 0x28, 0x00, 0xff, 0xfe, 0x7d]),
    ],
    ['an empty body', 'application/json', Buffer.alloc(0)],
    [
      'JSON with __proto__ keys, nested 1 000 levels',
      'application/json',
      Buffer.from(
        `{"__proto__":{"admin":true},"constructor":{"prototype":{}},"deep":${'['.repeat(1000)}${']'.repeat(1000)}}`,
      ),
    ],
    ['UTF-8 text of exactly CAPTURE_MAX_BODY_BYTES', 'text/plain; charset=utf-8', utf8OfLength(LIMIT)],
    [
      'binary of exactly CAPTURE_MAX_BODY_BYTES',
      'application/octet-stream',
      Buffer.concat([Buffer.from([0xff]), randomBytes(LIMIT - 1)]),
    ],
  ];
  const paths: [string, string, boolean][] = [
    ['POST with Content-Length', 'POST', false],
    ['POST chunked', 'POST', true],
    ['GET with a body', 'GET', false],
  ];
  const cases = bodies.flatMap(([label, contentType, body]) =>
    paths.map(([path, method, chunked]) => ({
      label: `${label}, ${path}`,
      contentType,
      body,
      method,
      chunked,
    })),
  );

  it.each(cases)('stores $label byte for byte, in the database and through the API', async (item) => {
    const endpoint = await newEndpoint(setup);
    const response = await send(setup.sut.url, item.method, `/in/${endpoint.token}`, {
      headers: { 'content-type': item.contentType },
      body: item.body,
      chunked: item.chunked,
    });
    expect(response.status).toBe(200);
    const { rows } = await setup.db.query('select body_text, body_bytes from events where id = $1', [
      response.json.id,
    ]);
    const stored: Buffer = rows[0].body_bytes ?? Buffer.from(rows[0].body_text ?? '', 'utf8');
    expect(stored.equals(item.body)).toBe(true);
    const fromApi = await api(
      setup.sut.url,
      'GET',
      `/api/endpoints/${endpoint.id}/events/${response.json.id}`,
      {
        token: setup.user.accessToken,
      },
    );
    const { body, body_encoding } = fromApi.body.event;
    expect(Buffer.from(body, body_encoding === 'base64' ? 'base64' : 'utf8').equals(item.body)).toBe(true);
  });

  it.each(paths)(
    'refuses one byte over the limit (%s) with 413, storing nothing',
    async (_label, method, chunked) => {
      const endpoint = await newEndpoint(setup);
      for (const body of [utf8OfLength(LIMIT + 1), randomBytes(LIMIT + 1), randomBytes(LIMIT * 4)]) {
        const response = await send(setup.sut.url, method, `/in/${endpoint.token}`, { body, chunked });
        expect(response.status).toBe(413);
        expect(response.json).toMatchObject({ statusCode: 413, error: 'Payload Too Large' });
      }
      expect(await countEvents(setup, endpoint.id)).toBe(0);
    },
  );
});

describe('capture tokens cannot be guessed', () => {
  let setup: CaptureSetup;
  let known: { id: string; token: string };
  beforeAll(async () => {
    setup = await setUp({});
    known = await newEndpoint(setup);
  });
  afterAll(() => tearDown(setup));

  const flipLast = (token: string) => `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;

  it('answers every unknown token with the same 404 and stores nothing: random, near misses, other case, deleted', async () => {
    const deleted = await newEndpoint(setup);
    await api(setup.sut.url, 'DELETE', `/api/endpoints/${deleted.id}`, { token: setup.user.accessToken });
    const before = await countEvents(setup);
    const guesses = [
      randomBytes(24).toString('base64url'),
      flipLast(known.token),
      known.token.toUpperCase() === known.token ? known.token.toLowerCase() : known.token.toUpperCase(),
      `${known.token}x`,
      known.token.slice(0, -1),
      deleted.token,
      `${known.token.slice(0, 16)}%00${known.token.slice(16)}`,
      `${known.token}%20`,
      "' or '1'='1",
    ];
    const answers = new Set<string>();
    for (const guess of guesses) {
      const response = await send(setup.sut.url, 'POST', `/in/${encodeURIComponent(guess)}`, { body: '{}' });
      expect({ guess, status: response.status }).toEqual({ guess, status: 404 });
      answers.add(response.text);
    }
    expect([...answers]).toEqual([
      JSON.stringify({ statusCode: 404, error: 'Not Found', message: 'no endpoint has this capture URL' }),
    ]);
    expect(await countEvents(setup)).toBe(before);
  });

  it('takes as long to answer an unknown token as a known one (medians, generous tolerance)', async () => {
    const rounds = SOAK ? 400 : 40;
    const timings: Record<'known' | 'unknown' | 'nearMiss', number[]> = {
      known: [],
      unknown: [],
      nearMiss: [],
    };
    const tokens = {
      known: () => known.token,
      unknown: () => randomBytes(24).toString('base64url'),
      nearMiss: () => flipLast(known.token),
    };
    for (let round = -5; round < rounds; round++) {
      for (const kind of Object.keys(tokens) as (keyof typeof tokens)[]) {
        const started = process.hrtime.bigint();
        const response = await send(setup.sut.url, 'POST', `/in/${tokens[kind]()}`, {
          body: '{"probe":true}',
        });
        const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
        expect(response.status).toBe(kind === 'known' ? 200 : 404);
        if (round >= 0) timings[kind].push(elapsed);
      }
    }
    const [known_, unknown, nearMiss] = [
      median(timings.known),
      median(timings.unknown),
      median(timings.nearMiss),
    ];
    // an unknown token is looked up by the same statement that stores a known one's event
    expect(unknown / known_).toBeGreaterThan(1 / 3);
    expect(unknown / known_).toBeLessThan(3);
    expect(nearMiss / unknown).toBeGreaterThan(1 / 2);
    expect(nearMiss / unknown).toBeLessThan(2);
  });
});

describe('capture rate limit per endpoint (CAPTURE_RATE_LIMIT_PER_S)', () => {
  const RATE = 5;
  let setup: CaptureSetup;
  beforeAll(async () => {
    setup = await setUp({ CAPTURE_RATE_LIMIT_PER_S: String(RATE) });
  });
  afterAll(() => tearDown(setup));

  it('answers 429 beyond the limit for one endpoint, stores nothing for them, and leaves other endpoints unaffected', async () => {
    const [flooded, neighbour] = [await newEndpoint(setup), await newEndpoint(setup)];
    const burst = (token: string, count: number) =>
      Array.from({ length: count }, (_, n) =>
        send(setup.sut.url, 'POST', `/in/${token}`, { body: `{"n":${n}}` }),
      );
    await startOfSecond();
    const {
      result: [floodAnswers, neighbourAnswers],
      windows,
    } = await timed(() =>
      Promise.all([
        Promise.all(burst(flooded.token, RATE * 3)),
        Promise.all(burst(neighbour.token, RATE)),
        Promise.all(
          Array.from({ length: RATE * 2 }, () => burst(randomBytes(24).toString('base64url'), 1)[0]),
        ),
      ]),
    );
    const passed = expectLimited(floodAnswers, RATE, windows);
    for (const limited of floodAnswers.filter((response) => response.status === 429)) {
      expect(limited.headers['retry-after']).toBe('1');
      expect(limited.json).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    }
    expect(neighbourAnswers.map((response) => response.status)).toEqual(Array(RATE).fill(200));
    expect(await countEvents(setup, flooded.id)).toBe(passed);
    expect(await countEvents(setup, neighbour.id)).toBe(RATE);

    await startOfSecond();
    expect((await send(setup.sut.url, 'POST', `/in/${flooded.token}`, { body: '{}' })).status).toBe(200);
  });
});

describe('rate limits shared by two API processes (counted in Redis)', () => {
  const RATE = 3;
  const AUTH_LIMIT = 10;
  let setup: CaptureSetup;
  let second: ServiceProcess;
  let secondUrl: string;
  beforeAll(async () => {
    const limits = { CAPTURE_RATE_LIMIT_PER_S: String(RATE), AUTH_RATE_LIMIT_PER_MIN: String(AUTH_LIMIT) };
    setup = await setUp(limits);
    second = await spawnService({
      APP_ROLE: 'api',
      DATABASE_URL: setup.sut.env.DATABASE_URL,
      REDIS_URL: setup.sut.env.REDIS_URL,
      REDIS_PREFIX: setup.sut.env.REDIS_PREFIX,
      LOG_LEVEL: 'warn',
      ...limits,
    });
    secondUrl = `http://127.0.0.1:${second.port}`;
  });
  afterAll(async () => {
    await stopService(second);
    await tearDown(setup);
  });

  it('lets one endpoint through CAPTURE_RATE_LIMIT_PER_S times a second in all, whichever process takes them', async () => {
    const endpoint = await newEndpoint(setup);
    await startOfSecond();
    const { result: answers, windows } = await timed(() =>
      Promise.all(
        Array.from({ length: RATE * 4 }, (_, n) =>
          send(n % 2 ? secondUrl : setup.sut.url, 'POST', `/in/${endpoint.token}`, { body: `{"n":${n}}` }),
        ),
      ),
    );
    expect(await countEvents(setup, endpoint.id)).toBe(expectLimited(answers, RATE, windows));
  });

  it('answers the attempt past AUTH_RATE_LIMIT_PER_MIN from one address with 429, whichever process took the others', async () => {
    const body = { email: 'nobody@example.com', password: 'wrong password' };
    const statuses = [];
    for (let attempt = 1; attempt <= AUTH_LIMIT; attempt++)
      statuses.push(
        (await api(attempt % 2 ? secondUrl : setup.sut.url, 'POST', '/api/auth/login', { body })).status,
      );
    expect(statuses).not.toContain(429);
    for (const url of [setup.sut.url, secondUrl])
      expect((await api(url, 'POST', '/api/auth/login', { body })).status).toBe(429);
  });
});
