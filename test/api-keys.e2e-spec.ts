import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { api, createApiKey, registerUser, type RegisteredUser } from './support/api-client';
import { HEARTBEAT_MS } from '../src/realtime/event-stream.gateway';
import { SseClient } from './support/sse-client';
import { startTestApp, type TestApp } from './support/test-app';
import { createEndpoint } from './support/webhook-fixtures';

describe('API keys', () => {
  let sut: TestApp;
  let db: Client;
  let owner: RegisteredUser;
  const streams: SseClient[] = [];

  const createKey = (body: Record<string, unknown> = { name: 'CI' }, user = owner) =>
    createApiKey(sut.url, user, body);

  const keyCount = async () =>
    Number((await db.query('select count(*) from api_keys')).rows[0].count as string);

  beforeAll(async () => {
    sut = await startTestApp();
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    owner = await registerUser(sut.url);
  });
  afterAll(async () => {
    streams.forEach((stream) => stream.close());
    await db.end();
    await sut.close();
  });

  it('creates a key shown once, kept only as its hash, listed without it', async () => {
    const { api_key, key } = await createKey({ name: '  deploy script  ' });
    expect(key).toMatch(/^htk_[A-Za-z0-9_-]{43}$/);
    expect(api_key).toEqual({
      id: expect.any(String),
      name: 'deploy script',
      scope: 'write',
      prefix: key.slice(0, 12),
      created_at: expect.any(String),
      expires_at: null,
      last_used_at: null,
    });
    const stored = await db.query('select key_hash, prefix from api_keys where id = $1', [api_key.id]);
    expect(stored.rows[0].key_hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(JSON.stringify(stored.rows)).not.toContain(key);

    const listed = await api(sut.url, 'GET', '/api/api-keys', { token: owner.accessToken });
    expect(listed.status).toBe(200);
    expect(listed.body.api_keys).toContainEqual(api_key);
    expect(JSON.stringify(listed.body)).not.toContain(key);
  });

  it('accepts a key wherever an access token works, and records its last use', async () => {
    const { api_key, key } = await createKey();
    const created = await api(sut.url, 'POST', '/api/endpoints', { token: key, body: { name: 'From CI' } });
    expect(created.status).toBe(201);
    const listed = await api(sut.url, 'GET', '/api/endpoints', { token: key });
    expect(listed.body.endpoints.map((endpoint: { id: string }) => endpoint.id)).toContain(
      created.body.endpoint.id,
    );
    const me = await api(sut.url, 'GET', '/api/auth/me', { token: key });
    expect(me.body.user.email).toBe(owner.email);

    const deadline = Date.now() + 5_000;
    let lastUsed: string | null = null;
    while (!lastUsed && Date.now() < deadline) {
      const keys = await api(sut.url, 'GET', '/api/api-keys', { token: owner.accessToken });
      lastUsed = keys.body.api_keys.find((listedKey: { id: string }) => listedKey.id === api_key.id)
        .last_used_at as string | null;
      if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Date.parse(lastUsed ?? '')).toBeGreaterThan(Date.parse(api_key.created_at ?? '') - 1_000);

    // Written at most once a minute per key and process: more calls right after leave it as it was.
    for (let call = 0; call < 3; call += 1)
      expect((await api(sut.url, 'GET', '/api/auth/me', { token: key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const keys = await api(sut.url, 'GET', '/api/api-keys', { token: owner.accessToken });
    expect(keys.body.api_keys.find((listedKey: { id: string }) => listedKey.id === api_key.id)).toMatchObject(
      {
        last_used_at: lastUsed,
      },
    );
  });

  it('lets a read key GET and nothing else', async () => {
    const { api_key, key } = await createKey({ name: 'dashboards', scope: 'read' });
    expect(api_key.scope).toBe('read');
    const { endpointId } = await createEndpoint(sut.url, owner);
    expect((await api(sut.url, 'GET', `/api/endpoints/${endpointId}`, { token: key })).status).toBe(200);
    expect((await api(sut.url, 'GET', `/api/endpoints/${endpointId}/events`, { token: key })).status).toBe(
      200,
    );
    for (const [method, path, body] of [
      ['POST', '/api/endpoints', { name: 'nope' }],
      ['PATCH', `/api/endpoints/${endpointId}`, { name: 'renamed' }],
      ['DELETE', `/api/endpoints/${endpointId}`, undefined],
    ] as const) {
      const refused = await api(sut.url, method, path, { token: key, body });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toBe('this API key is read-only: it may only make GET requests');
    }
    const endpoint = await api(sut.url, 'GET', `/api/endpoints/${endpointId}`, { token: key });
    expect(endpoint.body.endpoint.name).toBe('Payments');
  });

  it('cannot list, create or revoke API keys', async () => {
    const { api_key, key } = await createKey();
    const before = await keyCount();
    for (const [method, path] of [
      ['GET', '/api/api-keys'],
      ['POST', '/api/api-keys'],
      ['DELETE', `/api/api-keys/${api_key.id}`],
    ] as const) {
      const refused = await api(sut.url, method, path, {
        token: key,
        body: method === 'POST' ? { name: 'x' } : undefined,
      });
      expect(refused.status).toBe(403);
      expect(refused.body.message).toMatch(/API keys cannot manage API keys/);
    }
    expect(await keyCount()).toBe(before);
  });

  it('refuses a revoked key at once, and only its owner can revoke it', async () => {
    const { api_key, key } = await createKey();
    const stranger = await registerUser(sut.url);
    const notTheirs = await api(sut.url, 'DELETE', `/api/api-keys/${api_key.id}`, {
      token: stranger.accessToken,
    });
    expect(notTheirs.status).toBe(404);
    expect((await api(sut.url, 'GET', '/api/endpoints', { token: key })).status).toBe(200);

    const revoked = await api(sut.url, 'DELETE', `/api/api-keys/${api_key.id}`, { token: owner.accessToken });
    expect(revoked).toMatchObject({ status: 200, body: { ok: true } });
    const refused = await api(sut.url, 'GET', '/api/endpoints', { token: key });
    expect(refused.status).toBe(401);
    expect(refused.body.message).toBe('API key is unknown, expired or revoked');
    const again = await api(sut.url, 'DELETE', `/api/api-keys/${api_key.id}`, { token: owner.accessToken });
    expect(again.status).toBe(404);
    const listed = await api(sut.url, 'GET', '/api/api-keys', { token: owner.accessToken });
    expect(listed.body.api_keys.map((listedKey: { id: string }) => listedKey.id)).not.toContain(api_key.id);
  });

  it("keeps each user's keys apart", async () => {
    const stranger = await registerUser(sut.url);
    const { api_key } = await createKey({ name: 'stranger key' }, stranger);
    const mine = await api(sut.url, 'GET', '/api/api-keys', { token: owner.accessToken });
    expect(mine.body.api_keys.map((listedKey: { id: string }) => listedKey.id)).not.toContain(api_key.id);
  });

  it('stops accepting a key when it expires', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const { api_key, key } = await createKey({ name: 'one hour', expires_at: expiresAt });
    expect(api_key.expires_at).toBe(expiresAt);
    expect((await api(sut.url, 'GET', '/api/endpoints', { token: key })).status).toBe(200);
    await db.query(`update api_keys set expires_at = now() - interval '1 second' where id = $1`, [
      api_key.id,
    ]);
    expect((await api(sut.url, 'GET', '/api/endpoints', { token: key })).status).toBe(401);
  });

  it('refuses an unknown or malformed key with 401', async () => {
    for (const token of [`htk_${'A'.repeat(43)}`, 'htk_', 'htk_not-a-key']) {
      const refused = await api(sut.url, 'GET', '/api/endpoints', { token });
      expect(refused.status).toBe(401);
    }
  });

  it('answers bad input with a 400 naming the field, storing nothing', async () => {
    const before = await keyCount();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{}, /name must be/],
      [{ name: '   ' }, /name must be 1 to 100 characters, not counting spaces at either end/],
      [{ name: 'x'.repeat(101) }, /name must be 1 to 100 characters/],
      [{ name: 'x', scope: 'admin' }, /scope must be one of read, write/],
      [{ name: 'x', scope: null }, /scope must be one of read, write/],
      [{ name: 'x', expires_at: 'tomorrow' }, /expires_at must be an ISO 8601 date-time/],
      [{ name: 'x', expires_at: 42 }, /expires_at must be an ISO 8601 date-time/],
      [{ name: 'x', expires_at: '2020-01-01T00:00:00Z' }, /expires_at must be in the future/],
      [{ name: 'x', expires_at: '9999-12-31T23:00:00-05:00' }, /expires_at must be before the year 10000/],
      [{ name: 'x', owner: 'me' }, /owner/],
    ];
    for (const [body, message] of cases) {
      const refused = await api(sut.url, 'POST', '/api/api-keys', { token: owner.accessToken, body });
      expect({ body, status: refused.status }).toEqual({ body, status: 400 });
      expect(JSON.stringify(refused.body.message)).toMatch(message);
    }
    expect(await keyCount()).toBe(before);
  });

  it('opens the live stream with a read key', async () => {
    const { key } = await createKey({ name: 'listen', scope: 'read' });
    const fixture = await createEndpoint(sut.url, owner);
    const stream = await SseClient.open(`${sut.url}/api/endpoints/${fixture.endpointId}/events/stream`, key);
    streams.push(stream);
    expect(stream.status).toBe(200);
    const captured = await fetch(fixture.captureUrl, { method: 'POST', body: '{"hello":"key"}' });
    const { id } = (await captured.json()) as { id: string };
    const message = await stream.waitFor((candidate) => candidate.event === 'event.created');
    expect(JSON.parse(message.data).id).toBe(id);
  });

  it('ends a live stream opened with a key when the key is revoked, or expires', async () => {
    const fixture = await createEndpoint(sut.url, owner);
    const streamUrl = `${sut.url}/api/endpoints/${fixture.endpointId}/events/stream`;
    const ended = async (stream: SseClient) =>
      Promise.race([
        stream.closed.then(() => 'ended'),
        new Promise((resolve) => setTimeout(resolve, 10_000, 'still open after 10 s')),
      ]);

    const revoked = await createKey({ name: 'revoked while streaming' });
    const kept = await createKey({ name: 'kept' });
    const [doomed, survivor] = await Promise.all(
      [revoked.key, kept.key].map((key) => SseClient.open(streamUrl, key)),
    );
    streams.push(doomed, survivor);
    await api(sut.url, 'DELETE', `/api/api-keys/${revoked.api_key.id}`, { token: owner.accessToken });
    expect(await ended(doomed)).toBe('ended');
    expect((await SseClient.open(streamUrl, revoked.key)).status).toBe(401);

    const expiring = await createKey({
      name: 'expires while streaming',
      expires_at: new Date(Date.now() + 1_500).toISOString(),
    });
    const expired = await SseClient.open(streamUrl, expiring.key);
    streams.push(expired);
    expect(await ended(expired)).toBe('ended');

    // The other key's stream is still there: a change reaches it.
    await fetch(fixture.captureUrl, { method: 'POST', body: 'still listening' });
    await survivor.waitFor((message) => message.event === 'event.created');
  });

  it('ends a live stream at its next heartbeat when its key was revoked but no process was told', async () => {
    const fixture = await createEndpoint(sut.url, owner);
    const revoked = await createKey({ name: 'revoked without an announcement' });
    const stream = await SseClient.open(
      `${sut.url}/api/endpoints/${fixture.endpointId}/events/stream`,
      revoked.key,
    );
    streams.push(stream);
    expect(stream.status).toBe(200);
    // Gone from PostgreSQL with no word through Redis, as when the announcement of a revocation is lost.
    await db.query('delete from api_keys where id = $1', [revoked.api_key.id]);
    const outcome = await Promise.race([
      stream.closed.then(() => 'ended'),
      new Promise((resolve) => setTimeout(resolve, HEARTBEAT_MS + 10_000, 'still open')),
    ]);
    expect(outcome).toBe('ended');
  }, 40_000);

  it('allows at most 100 keys per user', async () => {
    const user = await registerUser(sut.url);
    for (let created = 0; created < 100; created++) await createKey({ name: `key ${created}` }, user);
    const refused = await api(sut.url, 'POST', '/api/api-keys', {
      token: user.accessToken,
      body: { name: 'one more' },
    });
    expect(refused.status).toBe(409);
  });
});
