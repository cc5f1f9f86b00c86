import { Client } from 'pg';
import { api, registerUser, type RegisteredUser } from './support/api-client';
import { routeQueued } from './support/knex-sql';
import { startTestApp, type TestApp } from './support/test-app';

async function setUp(sut: TestApp): Promise<{ user: RegisteredUser; endpointId: string; token: string }> {
  const user = await registerUser(sut.url);
  const response = await api(sut.url, 'POST', '/api/endpoints', {
    token: user.accessToken,
    body: { name: 'Destinations' },
  });
  return { user, endpointId: response.body.endpoint.id, token: response.body.endpoint.public_token };
}

describe('destinations', () => {
  let sut: TestApp;
  let db: Client;
  let user: RegisteredUser;
  let endpointId: string;
  let token: string;

  const call = (method: string, path: string, body?: unknown) =>
    api(sut.url, method, path, { token: user.accessToken, body });
  const base = () => `/api/endpoints/${endpointId}/destinations`;
  const add = async (body: Record<string, unknown>) => {
    const response = await call('POST', base(), body);
    expect(response.status).toBe(201);
    return response.body.destination;
  };

  beforeAll(async () => {
    // the default test environment allows private networks (so the delivery tests can use 127.0.0.1)
    sut = await startTestApp({ APP_ROLE: 'api' });
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    ({ user, endpointId, token } = await setUp(sut));
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
  });

  it('adds a destination: active, secret null when not given, every field of the spec', async () => {
    const response = await call('POST', base(), { url: 'https://api.example.com/webhooks?source=hooktrail' });
    expect(response.status).toBe(201);
    expect(response.body.destination).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      endpoint_id: endpointId,
      url: 'https://api.example.com/webhooks?source=hooktrail',
      secret: null,
      secret_set: false,
      is_active: true,
      rate_limit: null,
      rate_limit_period: 'second',
      max_in_flight: null,
      paused: false,
      paused_reason: null,
      auto_pause_after: null,
      ordering: 'none',
      filter: null,
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      backlog: { pending: 0, oldest_pending_at: null },
    });
  });

  it('sets and reads back the flow-control fields; a bad value is a 400 naming the field and changes nothing', async () => {
    const limited = {
      rate_limit: 50,
      rate_limit_period: 'minute',
      max_in_flight: 5,
      paused: true,
      ordering: 'fifo',
    };
    const destination = await add({ url: 'https://api.example.com/limited', ...limited });
    expect(destination).toMatchObject(limited);
    const path = `${base()}/${destination.id}`;
    const changed = await call('PATCH', path, { rate_limit: null, max_in_flight: 1000, ordering: 'none' });
    expect(changed.status).toBe(200);
    const expected = { ...destination, rate_limit: null, max_in_flight: 1000, ordering: 'none' };
    expect(changed.body.destination).toEqual(expected);
    expect((await call('GET', path)).body.destination).toEqual(expected);

    const bad: [Record<string, unknown>, string][] = [
      [{ rate_limit: 0 }, 'rate_limit'],
      [{ rate_limit: 100_001 }, 'rate_limit'],
      [{ rate_limit: 1.5 }, 'rate_limit'],
      [{ rate_limit: '10' }, 'rate_limit'],
      [{ rate_limit_period: 'hour' }, 'rate_limit_period'],
      [{ rate_limit_period: null }, 'rate_limit_period'],
      [{ max_in_flight: 0 }, 'max_in_flight'],
      [{ max_in_flight: 1001 }, 'max_in_flight'],
      [{ paused: 'yes' }, 'paused'],
      [{ paused: null }, 'paused'],
      [{ ordering: 'lifo' }, 'ordering'],
      [{ ordering: null }, 'ordering'],
    ];
    for (const [body, field] of bad) {
      const refused = await call('PATCH', path, { url: 'https://api.example.com/other', ...body });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain(field);
      const created = await call('POST', base(), { url: 'https://api.example.com/other', ...body });
      expect(created.status).toBe(400);
    }
    expect((await call('GET', path)).body.destination).toEqual(expected);
  });

  it('gets one destination with its backlog: deliveries not yet delivered nor dead-lettered, and the oldest', async () => {
    // APP_ROLE=api: no worker runs, so every capture's delivery waits once the test has routed it.
    const own = await setUp(sut);
    const path = `/api/endpoints/${own.endpointId}/destinations`;
    const ownCall = (method: string, route: string) =>
      api(sut.url, method, route, { token: own.user.accessToken });
    const created = await api(sut.url, 'POST', path, {
      token: own.user.accessToken,
      body: { url: 'https://api.example.com/backlog' },
    });
    const destinationPath = `${path}/${created.body.destination.id}`;
    const eventIds: string[] = [];
    for (let n = 0; n < 4; n++) {
      const captured = await fetch(`${sut.url}/in/${own.token}`, { method: 'POST', body: `{"n":${n}}` });
      eventIds.push(((await captured.json()) as { id: string }).id);
    }
    await routeQueued(db);
    const { rows } = await db.query<{ event_id: string; created_at: Date }>(
      'select event_id, created_at from deliveries where event_id = any($1) order by created_at',
      [eventIds],
    );
    expect(rows).toHaveLength(4);

    const four = await ownCall('GET', destinationPath);
    expect(four.status).toBe(200);
    expect(four.body.destination).toMatchObject({
      id: created.body.destination.id,
      url: 'https://api.example.com/backlog',
      backlog: { pending: 4, oldest_pending_at: rows[0].created_at.toISOString() },
    });

    // One delivered, one dead-lettered: they no longer wait. One failed and owed a retry still does.
    const setStatus = (eventId: string, status: string) =>
      db.query('update deliveries set status = $2 where event_id = $1', [eventId, status]);
    await setStatus(rows[0].event_id, 'delivered');
    await setStatus(rows[1].event_id, 'dead_letter');
    await setStatus(rows[2].event_id, 'failed');
    const expected = { pending: 2, oldest_pending_at: rows[2].created_at.toISOString() };
    expect((await ownCall('GET', destinationPath)).body.destination.backlog).toEqual(expected);
    // The list and the endpoint show the same backlog.
    expect((await ownCall('GET', path)).body.destinations[0].backlog).toEqual(expected);
    const endpoint = await ownCall('GET', `/api/endpoints/${own.endpointId}`);
    expect(endpoint.body.endpoint.destinations[0].backlog).toEqual(expected);

    // A new URL: the waiting deliveries' next attempts go there, and they say so; the others keep theirs.
    const moved = await api(sut.url, 'PATCH', destinationPath, {
      token: own.user.accessToken,
      body: { url: 'https://api.example.com/moved' },
    });
    expect(moved.status).toBe(200);
    const urls = await db.query<{ destination_url: string }>(
      'select destination_url from deliveries where event_id = any($1) order by created_at',
      [eventIds],
    );
    expect(urls.rows.map((row) => row.destination_url)).toEqual([
      'https://api.example.com/backlog',
      'https://api.example.com/backlog',
      'https://api.example.com/moved',
      'https://api.example.com/moved',
    ]);
  });

  it('keeps a secret and returns it', async () => {
    const destination = await add({ url: 'https://api.example.com/signed', secret: 'whsec_abc123' });
    expect(destination).toMatchObject({ secret: 'whsec_abc123', secret_set: true });
    expect((await add({ url: 'https://api.example.com/null-secret', secret: null })).secret).toBeNull();
  });

  it('lists the endpoint destinations, oldest first', async () => {
    const own = await setUp(sut);
    const urls = ['https://a.example.com/1', 'https://b.example.com/2', 'https://c.example.com/3'];
    for (const url of urls) {
      await api(sut.url, 'POST', `/api/endpoints/${own.endpointId}/destinations`, {
        token: own.user.accessToken,
        body: { url },
      });
    }
    const response = await api(sut.url, 'GET', `/api/endpoints/${own.endpointId}/destinations`, {
      token: own.user.accessToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.destinations.map((destination: { url: string }) => destination.url)).toEqual(urls);
  });

  it('changes only the fields sent', async () => {
    const destination = await add({ url: 'https://api.example.com/original', secret: 'first-secret' });
    const path = `${base()}/${destination.id}`;
    const moved = await call('PATCH', path, { url: 'https://api.example.com/moved' });
    expect(moved.status).toBe(200);
    expect(moved.body.destination).toEqual({ ...destination, url: 'https://api.example.com/moved' });
    const unsigned = await call('PATCH', path, { secret: null });
    expect(unsigned.body.destination).toEqual({
      ...destination,
      url: 'https://api.example.com/moved',
      secret: null,
      secret_set: false,
    });
    const paused = await call('PATCH', path, { is_active: false });
    expect(paused.body.destination).toEqual({
      ...destination,
      url: 'https://api.example.com/moved',
      secret: null,
      secret_set: false,
      is_active: false,
    });
    const resigned = await call('PATCH', path, { secret: 'second-secret', is_active: true });
    expect(resigned.body.destination).toEqual({
      ...destination,
      url: 'https://api.example.com/moved',
      secret: 'second-secret',
    });
    const listed = (await call('GET', base())).body.destinations.find(
      (item: { id: string }) => item.id === destination.id,
    );
    expect(listed).toEqual(resigned.body.destination);
  });

  it('removes a destination; past deliveries keep its URL with destination.id null', async () => {
    const destination = await add({ url: 'https://api.example.com/removed' });
    const captured = await fetch(`${sut.url}/in/${token}`, { method: 'POST', body: '{"before":"removal"}' });
    const { id: eventId } = (await captured.json()) as { id: string };
    await routeQueued(db);

    const response = await call('DELETE', `${base()}/${destination.id}`);
    expect(response).toMatchObject({ status: 200, body: { ok: true } });
    expect((await db.query('select 1 from destinations where id = $1', [destination.id])).rowCount).toBe(0);
    expect((await call('DELETE', `${base()}/${destination.id}`)).status).toBe(404);
    expect((await call('PATCH', `${base()}/${destination.id}`, { is_active: false })).status).toBe(404);

    const deliveries = await call('GET', `/api/endpoints/${endpointId}/events/${eventId}/deliveries`);
    const kept = deliveries.body.deliveries.find(
      (delivery: { destination: { url: string } }) => delivery.destination.url === destination.url,
    );
    expect(kept.destination).toEqual({ id: null, url: 'https://api.example.com/removed' });

    // later events are no longer forwarded to it
    const after = (await (await fetch(`${sut.url}/in/${token}`, { method: 'POST', body: '{}' })).json()) as {
      id: string;
    };
    await routeQueued(db);
    const { rows } = await db.query('select destination_url from deliveries where event_id = $1', [after.id]);
    expect(rows.map((row) => row.destination_url)).not.toContain('https://api.example.com/removed');
  });

  it.each([
    ['a missing url', {}],
    ['an http:// url', { url: 'http://api.example.com/hook' }],
    ['a relative url', { url: '/webhooks' }],
    ['a url without a scheme', { url: 'api.example.com/hook' }],
    ['a scheme-relative https url', { url: 'https:api.example.com/hook' }],
    ['an ftp url', { url: 'ftp://example.com/file' }],
    ['garbage', { url: 'https://exa mple.com/' }],
    ['a number', { url: 42 }],
    ['a url over 2048 characters', { url: `https://example.com/${'a'.repeat(2048)}` }],
    ['user information that is not valid percent-encoding', { url: 'https://a%zz:b@example.com/hook' }],
  ])('refuses %s with "url must be an absolute https:// URL"', async (_label, body) => {
    const response = await call('POST', base(), body);
    expect(response.status).toBe(400);
    expect(response.body.message).toContain('url must be an absolute https:// URL');
  });

  it.each([
    ['an empty secret', { url: 'https://example.com/', secret: '' }],
    ['a secret of 257 characters', { url: 'https://example.com/', secret: 's'.repeat(257) }],
    ['a secret that is not a string', { url: 'https://example.com/', secret: 7 }],
    ['an unknown field', { url: 'https://example.com/', is_active: false }],
  ])('refuses %s (400 naming the field)', async (_label, body) => {
    const response = await call('POST', base(), body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toMatch(/secret|is_active/);
  });

  it.each([
    ['an http:// url', { url: 'http://example.com/' }, 'url'],
    ['url null', { url: null }, 'url'],
    ['is_active as a string', { is_active: 'yes' }, 'is_active'],
    ['an empty secret', { secret: '' }, 'secret'],
    ['an endpoint change', { endpoint_id: '00000000-0000-4000-8000-000000000000' }, 'endpoint_id'],
  ])('refuses to update with %s (400 naming the field, nothing changed)', async (_label, body, field) => {
    const destination = await add({ url: 'https://api.example.com/stays', secret: 'kept' });
    const response = await call('PATCH', `${base()}/${destination.id}`, body);
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.message)).toContain(field);
    const listed = (await call('GET', base())).body.destinations.find(
      (item: { id: string }) => item.id === destination.id,
    );
    expect(listed).toEqual(destination);
  });

  it('allows private addresses while DELIVERY_ALLOW_PRIVATE_NETWORKS=true', async () => {
    for (const url of [
      'https://127.0.0.1:8443/hook',
      'https://[::1]/hook',
      'https://localhost/hook',
      'https://10.0.0.1/',
    ]) {
      expect((await call('POST', base(), { url })).status).toBe(201);
    }
  });

  it('answers 404 for a destination id that is not a UUID, unknown, or of another endpoint of yours', async () => {
    const otherEndpoint = await call('POST', '/api/endpoints', { name: 'Other' });
    const foreign = await api(
      sut.url,
      'POST',
      `/api/endpoints/${otherEndpoint.body.endpoint.id}/destinations`,
      {
        token: user.accessToken,
        body: { url: 'https://example.com/other-endpoint' },
      },
    );
    for (const id of ['nope', '00000000-0000-4000-8000-000000000000', foreign.body.destination.id]) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { is_active: false }],
        ['DELETE', undefined],
      ] as const) {
        const response = await call(method, `${base()}/${id}`, body);
        expect(response.status).toBe(404);
        expect(response.body.message).toBe('destination not found');
      }
    }
    expect(
      (await db.query('select is_active from destinations where id = $1', [foreign.body.destination.id]))
        .rows[0].is_active,
    ).toBe(true);
  });
});

describe('destinations with DELIVERY_ALLOW_PRIVATE_NETWORKS=false', () => {
  let sut: TestApp;
  let user: RegisteredUser;
  let endpointId: string;

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api', DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false' });
    ({ user, endpointId } = await setUp(sut));
  });
  afterAll(() => sut.close());

  const post = (url: string) =>
    api(sut.url, 'POST', `/api/endpoints/${endpointId}/destinations`, {
      token: user.accessToken,
      body: { url },
    });

  it.each([
    'https://127.0.0.1/hook',
    'https://127.0.0.1:8443/hook',
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://0177.0.0.1/hook',
    'https://0.0.0.0/hook',
    'https://0/hook',
    'https://10.0.0.1/hook',
    'https://172.16.5.4/hook',
    'https://172.31.255.255/hook',
    'https://192.168.1.10/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/hook',
    'https://224.0.0.1/hook',
    'https://255.255.255.255/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    'https://[fc00::1]/hook',
    'https://[fd12:3456:789a::1]/hook',
    'https://[fe80::1]/hook',
    'https://[ff02::1]/hook',
    'https://localhost/hook',
    'https://LocalHost:3000/hook',
    'https://localhost./hook',
    'https://api.localhost/hook',
  ])('refuses %s with 400', async (url) => {
    const response = await post(url);
    expect(response.status).toBe(400);
    expect(response.body.message).toContain(
      'url must not point to a loopback, private, link-local or reserved address',
    );
  });

  it.each([
    'https://example.com/hook',
    'https://8.8.8.8/hook',
    'https://[2606:4700:4700::1111]/hook',
    'https://172.32.0.1/',
  ])('accepts the public %s', async (url) => {
    expect((await post(url)).status).toBe(201);
  });

  it('refuses a private address in a PATCH too, leaving the destination as it was', async () => {
    const created = await post('https://example.com/before');
    const path = `/api/endpoints/${endpointId}/destinations/${created.body.destination.id}`;
    const response = await api(sut.url, 'PATCH', path, {
      token: user.accessToken,
      body: { url: 'https://[::ffff:10.0.0.1]/' },
    });
    expect(response.status).toBe(400);
    const listed = await api(sut.url, 'GET', `/api/endpoints/${endpointId}/destinations`, {
      token: user.accessToken,
    });
    expect(
      listed.body.destinations.find((item: { id: string }) => item.id === created.body.destination.id).url,
    ).toBe('https://example.com/before');
  });
});
