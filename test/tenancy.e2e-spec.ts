import { Client } from 'pg';
import { api, registerUser, type RegisteredUser } from './support/api-client';
import { startTestApp, type TestApp } from './support/test-app';

interface Owned {
  user: RegisteredUser;
  endpointId: string;
  destinationId: string;
  eventId: string;
}

/** A user with one endpoint, one destination and one captured event. */
async function ownerWithData(sut: TestApp, label: string): Promise<Owned> {
  const user = await registerUser(sut.url);
  const endpoint = await api(sut.url, 'POST', '/api/endpoints', {
    token: user.accessToken,
    body: { name: `${label} endpoint` },
  });
  const { id: endpointId, public_token: token } = endpoint.body.endpoint;
  const destination = await api(sut.url, 'POST', `/api/endpoints/${endpointId}/destinations`, {
    token: user.accessToken,
    body: { url: `https://${label}.example.com/hook` },
  });
  const captured = await fetch(`${sut.url}/in/${token}`, { method: 'POST', body: `{"owner":"${label}"}` });
  const { id: eventId } = (await captured.json()) as { id: string };
  return { user, endpointId, destinationId: destination.body.destination.id, eventId };
}

/**
 * Every route under /api/endpoints/{id}, with a body that passes validation, so that only ownership can
 * refuse it. A route missing here fails the "covers every documented route" test below: add new routes
 * (e.g. the AI ones) to this table.
 */
const ROUTES: { method: string; path: string; body?: unknown }[] = [
  { method: 'GET', path: '/api/endpoints/{id}' },
  {
    method: 'PATCH',
    path: '/api/endpoints/{id}',
    body: { name: 'taken over', is_active: false, metadata: { pwned: true } },
  },
  { method: 'DELETE', path: '/api/endpoints/{id}' },
  { method: 'GET', path: '/api/endpoints/{id}/destinations' },
  {
    method: 'POST',
    path: '/api/endpoints/{id}/destinations',
    body: { url: 'https://attacker.example.com/steal' },
  },
  {
    method: 'PATCH',
    path: '/api/endpoints/{id}/destinations/{dId}',
    body: { url: 'https://attacker.example.com/steal' },
  },
  { method: 'DELETE', path: '/api/endpoints/{id}/destinations/{dId}' },
  { method: 'GET', path: '/api/endpoints/{id}/events' },
  { method: 'GET', path: '/api/endpoints/{id}/events/{eId}' },
  { method: 'GET', path: '/api/endpoints/{id}/events/{eId}/deliveries' },
  { method: 'POST', path: '/api/endpoints/{id}/events/{eId}/replay' },
  { method: 'GET', path: '/api/endpoints/{id}/events/stream' },
  { method: 'GET', path: '/api/endpoints/{id}/events/{eId}/ai/explain' },
  { method: 'GET', path: '/api/endpoints/{id}/events/{eId}/ai/schema' },
  {
    method: 'POST',
    path: '/api/endpoints/{id}/events/{eId}/ai/handler',
    body: { language: 'go', framework: 'gin' },
  },
  { method: 'GET', path: '/api/endpoints/{id}/events/{eId}/ai/diagnose' },
];

/** Status of a call; a streaming answer is cut off once its status is known. */
async function statusOf(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<number> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    signal: abort.signal,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  abort.abort();
  return response.status;
}

describe('tenancy: another user ids answer 404, exactly like missing ones', () => {
  let sut: TestApp;
  let db: Client;
  let alice: Owned;
  let mallory: Owned;

  const fill = (path: string, ids: { id: string; dId: string; eId: string }) =>
    path.replace('{id}', ids.id).replace('{dId}', ids.dId).replace('{eId}', ids.eId);

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    alice = await ownerWithData(sut, 'alice');
    mallory = await ownerWithData(sut, 'mallory');
    // the top plan, so that plan-gated routes (AI) get as far as the ownership check
    await db.query(`update users set plan = 'team' where id = any($1)`, [[alice.user.id, mallory.user.id]]);
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it.each(ROUTES)(
    "$method $path with Alice's ids and Mallory's token → 404",
    async ({ method, path, body }) => {
      const ids = { id: alice.endpointId, dId: alice.destinationId, eId: alice.eventId };
      expect(await statusOf(sut.url, method, fill(path, ids), mallory.user.accessToken, body)).toBe(404);
    },
  );

  it.each(ROUTES.filter((route) => route.path.includes('Id}')))(
    "$method $path with Mallory's endpoint but Alice's sub-resource ids → 404",
    async ({ method, path, body }) => {
      const ids = { id: mallory.endpointId, dId: alice.destinationId, eId: alice.eventId };
      expect(await statusOf(sut.url, method, fill(path, ids), mallory.user.accessToken, body)).toBe(404);
    },
  );

  it.each(ROUTES)(
    '$method $path with ids that do not exist → 404 (same answer)',
    async ({ method, path, body }) => {
      const missing = '00000000-0000-4000-8000-000000000000';
      const ids = { id: missing, dId: missing, eId: missing };
      expect(await statusOf(sut.url, method, fill(path, ids), mallory.user.accessToken, body)).toBe(404);
    },
  );

  it("leaves Alice's data untouched", async () => {
    const endpoint = await api(sut.url, 'GET', `/api/endpoints/${alice.endpointId}`, {
      token: alice.user.accessToken,
    });
    expect(endpoint.status).toBe(200);
    expect(endpoint.body.endpoint).toMatchObject({ name: 'alice endpoint', is_active: true, metadata: {} });
    expect(endpoint.body.endpoint.destinations).toEqual([
      expect.objectContaining({
        id: alice.destinationId,
        url: 'https://alice.example.com/hook',
        is_active: true,
      }),
    ]);
    const deliveries = await db.query('select count(*)::int as n from deliveries where event_id = $1', [
      alice.eventId,
    ]);
    expect(deliveries.rows[0].n).toBe(1);
  });

  it("never lists another user's endpoints, destinations or events", async () => {
    const endpoints = await api(sut.url, 'GET', '/api/endpoints', { token: mallory.user.accessToken });
    expect(endpoints.body.endpoints.map((endpoint: { id: string }) => endpoint.id)).toEqual([
      mallory.endpointId,
    ]);
    const destinations = await api(sut.url, 'GET', `/api/endpoints/${mallory.endpointId}/destinations`, {
      token: mallory.user.accessToken,
    });
    expect(destinations.body.destinations.map((destination: { id: string }) => destination.id)).toEqual([
      mallory.destinationId,
    ]);
    for (const query of ['', '?q=owner', '?q=alice', '?status=received']) {
      const events = await api(sut.url, 'GET', `/api/endpoints/${mallory.endpointId}/events${query}`, {
        token: mallory.user.accessToken,
      });
      expect(events.body.events.map((event: { id: string }) => event.id)).not.toContain(alice.eventId);
    }
    const searched = await api(sut.url, 'GET', `/api/endpoints/${mallory.endpointId}/events?q=alice`, {
      token: mallory.user.accessToken,
    });
    expect(searched.body.pagination.total).toBe(0);
  });

  it('covers every documented route under /api/endpoints/{id}', async () => {
    const { body } = await api(sut.url, 'GET', '/docs-json');
    const documented = Object.entries(body.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith('/api/endpoints/{id}'))
      .flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      );
    expect(documented.sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
  });
});
