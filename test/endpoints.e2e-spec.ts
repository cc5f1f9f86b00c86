import { Client } from 'pg';
import { api, registerUser, type RegisteredUser } from './support/api-client';
import { routeQueued } from './support/knex-sql';
import { startTestApp, type TestApp } from './support/test-app';

describe('endpoints', () => {
  let sut: TestApp;
  let db: Client;
  let user: RegisteredUser;

  const call = (method: string, path: string, body?: unknown) =>
    api(sut.url, method, path, { token: user.accessToken, body });
  const create = async (name = 'Stripe production') => {
    const response = await call('POST', '/api/endpoints', { name });
    expect(response.status).toBe(201);
    return response.body.endpoint;
  };
  const count = async (table: string, where: string, values: unknown[]) =>
    (await db.query<{ n: number }>(`select count(*)::int as n from ${table} where ${where}`, values)).rows[0]
      .n;

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api', SITE_URL: 'https://hooks.example.test/' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    user = await registerUser(sut.url);
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it('creates an endpoint with every field of the spec and its capture URL', async () => {
    const response = await call('POST', '/api/endpoints', { name: '  Stripe production  ' });
    expect(response.status).toBe(201);
    const { endpoint } = response.body;
    expect(endpoint).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      user_id: user.id,
      team_id: null,
      role: 'owner',
      retention_days: null,
      name: 'Stripe production',
      public_token: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      capture_url: `https://hooks.example.test/in/${endpoint.public_token}`,
      is_active: true,
      metadata: {},
      verification: null,
      inbound_auth: null,
      dedup: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(Math.abs(Date.parse(endpoint.created_at) - Date.now())).toBeLessThan(10_000);
  });

  it('gives every endpoint a different token of 192 random bits', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) tokens.add((await create(`e${i}`)).public_token);
    expect(tokens.size).toBe(5);
    for (const token of tokens) expect(Buffer.from(token, 'base64url')).toHaveLength(24);
  });

  it('lists only your endpoints, newest first, without destinations', async () => {
    const other = await registerUser(sut.url);
    const own = await registerUser(sut.url);
    const names = ['first', 'second', 'third'];
    for (const name of names) {
      await api(sut.url, 'POST', '/api/endpoints', { token: own.accessToken, body: { name } });
    }
    await api(sut.url, 'POST', '/api/endpoints', { token: other.accessToken, body: { name: 'not yours' } });
    const response = await api(sut.url, 'GET', '/api/endpoints', { token: own.accessToken });
    expect(response.status).toBe(200);
    expect(response.body.endpoints.map((endpoint: { name: string }) => endpoint.name)).toEqual([
      'third',
      'second',
      'first',
    ]);
    expect(response.body.endpoints[0]).not.toHaveProperty('destinations');
  });

  it('gets one endpoint with its destinations, oldest first', async () => {
    const endpoint = await create();
    const empty = await call('GET', `/api/endpoints/${endpoint.id}`);
    expect(empty.body).toEqual({ endpoint: { ...endpoint, destinations: [] } });
    for (const path of ['a', 'b']) {
      await call('POST', `/api/endpoints/${endpoint.id}/destinations`, {
        url: `https://example.com/${path}`,
      });
    }
    const response = await call('GET', `/api/endpoints/${endpoint.id}`);
    expect(response.status).toBe(200);
    expect(
      response.body.endpoint.destinations.map((destination: { url: string }) => destination.url),
    ).toEqual(['https://example.com/a', 'https://example.com/b']);
  });

  it('changes only the fields sent', async () => {
    const endpoint = await create('Original');
    const withMetadata = await call('PATCH', `/api/endpoints/${endpoint.id}`, {
      metadata: { env: 'prod', team: { id: 7 } },
    });
    expect(withMetadata.status).toBe(200);
    expect(withMetadata.body.endpoint).toEqual({ ...endpoint, metadata: { env: 'prod', team: { id: 7 } } });

    const renamed = await call('PATCH', `/api/endpoints/${endpoint.id}`, { name: 'Renamed' });
    expect(renamed.body.endpoint).toEqual({
      ...endpoint,
      name: 'Renamed',
      metadata: { env: 'prod', team: { id: 7 } },
    });

    const paused = await call('PATCH', `/api/endpoints/${endpoint.id}`, { is_active: false });
    expect(paused.body.endpoint).toMatchObject({
      name: 'Renamed',
      is_active: false,
      metadata: { env: 'prod', team: { id: 7 } },
    });

    const nothing = await call('PATCH', `/api/endpoints/${endpoint.id}`, {});
    expect(nothing.body.endpoint).toEqual(paused.body.endpoint);

    const stored = await call('GET', `/api/endpoints/${endpoint.id}`);
    expect(stored.body.endpoint).toMatchObject({
      name: 'Renamed',
      is_active: false,
      metadata: { env: 'prod', team: { id: 7 } },
      public_token: endpoint.public_token,
      created_at: endpoint.created_at,
    });
  });

  it.each([
    ['a missing name', {}, 'name'],
    ['an empty name', { name: '' }, 'name'],
    [
      'a name of spaces',
      { name: '   ' },
      'name must be 1 to 200 characters, not counting spaces at either end',
    ],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, 'name'],
    ['a name that is not a string', { name: 42 }, 'name'],
    ['an unknown field', { name: 'ok', public_token: 'mine' }, 'public_token'],
  ])('refuses to create with %s (400 naming the field)', async (_label, body, field) => {
    const response = await call('POST', '/api/endpoints', body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toContain(field);
  });

  it('accepts a name of exactly 200 characters', async () => {
    expect((await create('n'.repeat(200))).name).toHaveLength(200);
  });

  it.each([
    ['metadata as an array', { metadata: [1, 2] }, 'metadata'],
    ['metadata as a string', { metadata: 'env=prod' }, 'metadata'],
    ['metadata as a number', { metadata: 3 }, 'metadata'],
    ['metadata as null', { metadata: null }, 'metadata'],
    ['metadata over 16 KiB', { metadata: { blob: 'x'.repeat(16 * 1024) } }, 'metadata'],
    ['is_active as a string', { is_active: 'false' }, 'is_active'],
    ['is_active as null', { is_active: null }, 'is_active'],
    ['name as null', { name: null }, 'name'],
    [
      'a name of spaces',
      { name: ' ' },
      'name must be 1 to 200 characters, not counting spaces at either end',
    ],
    ['a token change', { public_token: 'mine' }, 'public_token'],
  ])('refuses to update with %s (400 naming the field, nothing changed)', async (_label, body, field) => {
    const endpoint = await create('Unchanged');
    const response = await call('PATCH', `/api/endpoints/${endpoint.id}`, body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toContain(field);
    const { endpoint: stored } = (await call('GET', `/api/endpoints/${endpoint.id}`)).body;
    expect(stored).toEqual({ ...endpoint, destinations: [] });
  });

  it('accepts metadata of exactly 16 KiB serialised', async () => {
    const endpoint = await create();
    const padding = 16 * 1024 - JSON.stringify({ blob: '' }).length;
    const response = await call('PATCH', `/api/endpoints/${endpoint.id}`, {
      metadata: { blob: 'x'.repeat(padding) },
    });
    expect(response.status).toBe(200);
    expect(response.body.endpoint.metadata.blob).toHaveLength(padding);
  });

  it('deletes an endpoint with its destinations, events and deliveries', async () => {
    const endpoint = await create('Doomed');
    await call('POST', `/api/endpoints/${endpoint.id}/destinations`, { url: 'https://example.com/hook' });
    for (let i = 0; i < 3; i++) {
      const captured = await fetch(endpoint.capture_url.replace('https://hooks.example.test', sut.url), {
        method: 'POST',
        body: `{"i":${i}}`,
      });
      expect(captured.status).toBe(200);
    }
    const eventIds = (await db.query('select id from events where endpoint_id = $1', [endpoint.id])).rows.map(
      (row) => row.id,
    );
    expect(eventIds).toHaveLength(3);
    await routeQueued(db);
    expect(await count('deliveries', 'event_id = any($1)', [eventIds])).toBe(3);
    expect(await count('destinations', 'endpoint_id = $1', [endpoint.id])).toBe(1);

    const response = await call('DELETE', `/api/endpoints/${endpoint.id}`);
    expect(response).toMatchObject({ status: 200, body: { ok: true } });

    expect(await count('endpoints', 'id = $1', [endpoint.id])).toBe(0);
    expect(await count('destinations', 'endpoint_id = $1', [endpoint.id])).toBe(0);
    expect(await count('events', 'endpoint_id = $1', [endpoint.id])).toBe(0);
    expect(await count('deliveries', 'event_id = any($1)', [eventIds])).toBe(0);
    expect((await call('GET', `/api/endpoints/${endpoint.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/endpoints/${endpoint.id}`)).status).toBe(404);
    const captured = await fetch(`${sut.url}/in/${endpoint.public_token}`, { method: 'POST', body: '{}' });
    expect(captured.status).toBe(404);
  });

  it.each([
    ['GET', ''],
    ['PATCH', ''],
    ['DELETE', ''],
  ])('answers %s with an id that is not a UUID, or unknown, with 404', async (method) => {
    for (const id of ['not-a-uuid', '00000000-0000-4000-8000-000000000000', "1' or '1'='1"]) {
      const response = await call(
        method,
        `/api/endpoints/${encodeURIComponent(id)}`,
        method === 'PATCH' ? { name: 'x' } : undefined,
      );
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({
        statusCode: 404,
        error: 'Not Found',
        message: 'endpoint not found',
      });
    }
  });

  it('needs a valid access token on every route', async () => {
    const endpoint = await create();
    for (const [method, path] of [
      ['GET', '/api/endpoints'],
      ['POST', '/api/endpoints'],
      ['GET', `/api/endpoints/${endpoint.id}`],
      ['PATCH', `/api/endpoints/${endpoint.id}`],
      ['DELETE', `/api/endpoints/${endpoint.id}`],
    ]) {
      const response = await api(sut.url, method, path, {
        token: 'not-a-jwt',
        body: method === 'GET' || method === 'DELETE' ? undefined : {},
      });
      expect(response.status).toBe(401);
    }
  });

  it('documents every route in the OpenAPI document', async () => {
    const { body } = await api(sut.url, 'GET', '/docs-json');
    expect(Object.keys(body.paths['/api/endpoints'])).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(body.paths['/api/endpoints/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    expect(Object.keys(body.paths['/api/endpoints/{id}/destinations'])).toEqual(
      expect.arrayContaining(['get', 'post']),
    );
    expect(Object.keys(body.paths['/api/endpoints/{id}/destinations/{dId}'])).toEqual(
      expect.arrayContaining(['patch', 'delete']),
    );
    expect(Object.keys(body.paths['/api/endpoints/{id}/events'])).toEqual(['get']);
    expect(Object.keys(body.paths['/api/endpoints/{id}/events/{eId}'])).toEqual(['get']);
    expect(Object.keys(body.paths['/api/endpoints/{id}/events/{eId}/deliveries'])).toEqual(['get']);
    expect(body.components.schemas.EndpointDto.properties).toHaveProperty('capture_url');
    expect(body.components.schemas.CreateEndpointDto.required).toEqual(['name']);
    expect(body.components.schemas.EventDto.properties).toHaveProperty('body_encoding');
    const listParameters = body.paths['/api/endpoints/{id}/events'].get.parameters.map(
      (parameter: { name: string }) => parameter.name,
    );
    expect(listParameters).toEqual(expect.arrayContaining(['status', 'from', 'to', 'q', 'page', 'limit']));
    expect(body.paths['/api/endpoints/{id}'].patch.responses).toHaveProperty('404');
  });
});
