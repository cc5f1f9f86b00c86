import { sign as signGithub } from '@octokit/webhooks-methods';
import { createHmac } from 'node:crypto';
import { Client } from 'pg';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { api, registerUser, type RegisteredUser } from './support/api-client';
import { HttpsDestination } from './support/https-destination';
import { routeQueued } from './support/knex-sql';
import { send, type RawResponse } from './support/raw-http';
import { type ServiceProcess, spawnService, stopService } from './support/service-process';
import { DUPLICATE_COUNT } from '../src/events/events.repository';
import { startTestApp, type TestApp } from './support/test-app';
import {
  addDestination,
  createEndpoint,
  type EndpointFixture,
  waitForEvent,
} from './support/webhook-fixtures';

const STRIPE_SECRET = 'whsec_test_5f0c6f0e1f7a4c1b9a55';
const SHARED_SECRET = 'shared-signing-secret-2026';
const WEBHOOK_SECRET = `whsec_${Buffer.from('standard-webhooks-key-32-bytes!!').toString('base64')}`;

/** One provider's signature over a body, made with the provider's own tooling or its documented scheme. */
type Signer = (body: string, secret: string) => Promise<Record<string, string>>;

const seconds = () => Math.floor(Date.now() / 1000);
const hmac = (algorithm: string, secret: string, text: string) => createHmac(algorithm, secret).update(text);

const PROVIDERS: {
  provider: string;
  secret: string;
  wrongSecret?: string;
  sign: Signer;
  extra?: Record<string, string>;
}[] = [
  {
    provider: 'stripe',
    secret: STRIPE_SECRET,
    sign: async (payload, secret) => ({
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }),
    }),
  },
  {
    provider: 'github',
    secret: SHARED_SECRET,
    sign: async (payload, secret) => ({ 'x-hub-signature-256': await signGithub(secret, payload) }),
  },
  {
    provider: 'shopify',
    secret: SHARED_SECRET,
    sign: async (payload, secret) => ({
      'x-shopify-hmac-sha256': hmac('sha256', secret, payload).digest('base64'),
    }),
  },
  {
    provider: 'slack',
    secret: SHARED_SECRET,
    sign: async (payload, secret) => {
      const timestamp = String(seconds());
      return {
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': `v0=${hmac('sha256', secret, `v0:${timestamp}:${payload}`).digest('hex')}`,
      };
    },
  },
  {
    provider: 'standard_webhooks',
    secret: WEBHOOK_SECRET,
    wrongSecret: `whsec_${Buffer.from('another-key-of-thirty-two-bytes!').toString('base64')}`,
    sign: async (payload, secret) => {
      const id = `msg_${seconds()}`;
      const now = new Date();
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(id, now, payload),
      };
    },
  },
  {
    provider: 'hmac',
    secret: SHARED_SECRET,
    extra: { header: 'x-signature', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=' },
    sign: async (payload, secret) => ({
      'x-signature': `sha512=${hmac('sha512', secret, payload).digest('base64')}`,
    }),
  },
];

describe('ingest rules', () => {
  let sut: TestApp;
  let db: Client;
  let sink: HttpsDestination;
  /** One user for every endpoint: registrations are rate-limited per address. */
  let owner: RegisteredUser;

  beforeAll(async () => {
    sut = await startTestApp({ APP_ROLE: 'api' });
    owner = await registerUser(sut.url);
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    sink = await HttpsDestination.start();
  });
  afterAll(async () => {
    await sink.close();
    await db.end();
    await sut.close();
  });

  /** An endpoint with one destination, then the rules set by PATCH. */
  async function endpointWith(rules: Record<string, unknown>): Promise<EndpointFixture> {
    const fixture = await createEndpoint(sut.url, owner);
    await addDestination(sut.url, fixture, `${sink.url}/hook`);
    const patched = await setRules(fixture, rules);
    expect(patched.status).toBe(200);
    return fixture;
  }

  const setRules = (fixture: EndpointFixture, rules: Record<string, unknown>) =>
    api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}`, {
      token: fixture.user.accessToken,
      body: rules,
    });

  const post = (
    fixture: EndpointFixture,
    body: string,
    headers: Record<string, string> = {},
    base = sut.url,
  ) =>
    send(base, 'POST', new URL(fixture.captureUrl).pathname, {
      body,
      headers: { 'content-type': 'application/json', ...headers },
    });

  /** The endpoint's events, with their deliveries once routed (the router's statement, run here: no worker runs). */
  async function stored(fixture: EndpointFixture) {
    await routeQueued(db);
    const { rows } = await db.query<{
      id: string;
      verification_status: string;
      verification_reason: string | null;
      duplicate_count: number;
      deliveries: number;
    }>(
      `select id, verification_status, verification_reason, ${DUPLICATE_COUNT},
              (select count(*)::int from deliveries d where d.event_id = events.id) as deliveries
       from events where endpoint_id = $1 order by received_at`,
      [fixture.endpointId],
    );
    return rows;
  }

  describe('verification', () => {
    it.each(PROVIDERS)(
      '$provider: a valid signature is verified and forwarded; a wrong secret gets 401, is stored and not forwarded',
      async ({ provider, secret, wrongSecret = `${secret}-wrong`, sign, extra }) => {
        const fixture = await endpointWith({ verification: { provider, secret, mode: 'enforce', ...extra } });
        const body = '{"id":"evt_1","event_id":"Ev1","type":"invoice.paid"}';

        const good = await post(fixture, body, await sign(body, secret));
        const bad = await post(fixture, body, await sign(body, wrongSecret));

        expect(good.status).toBe(200);
        expect(bad.status).toBe(401);
        expect(bad.json.message).toMatch(/^signature verification failed: /);
        const [first, second] = await stored(fixture);
        expect(first).toMatchObject({ id: good.json.id, verification_status: 'verified', deliveries: 1 });
        expect(first.verification_reason).toBeNull();
        expect(second).toMatchObject({ id: bad.json.id, verification_status: 'failed', deliveries: 0 });
        expect(second.verification_reason).toEqual(expect.any(String));
      },
    );

    it('flag mode stores and forwards a tampered body, marked failed with the reason; the list filters on it', async () => {
      const fixture = await endpointWith({
        verification: { provider: 'stripe', secret: STRIPE_SECRET, mode: 'flag' },
      });
      const body = '{"id":"evt_2","amount":100}';
      const headers = await PROVIDERS[0].sign(body, STRIPE_SECRET);

      const tampered = await post(fixture, body.replace('100', '999'), headers);
      const genuine = await post(fixture, body, headers);

      expect(tampered.status).toBe(200);
      expect(genuine.status).toBe(200);
      const event = await waitForEvent(sut.url, fixture, tampered.json.id, () => true);
      expect(event.verification).toEqual({ status: 'failed', reason: expect.stringMatching(/signature/) });
      expect((await stored(fixture)).map((row) => row.deliveries)).toEqual([1, 1]);
      const failed = await api(
        sut.url,
        'GET',
        `/api/endpoints/${fixture.endpointId}/events?verification=failed`,
        {
          token: fixture.user.accessToken,
        },
      );
      expect(failed.body.events.map((listed: { id: string }) => listed.id)).toEqual([tampered.json.id]);
      expect(failed.body.pagination.total).toBe(1);
    });

    it('refuses a Stripe signature older than the tolerance', async () => {
      const fixture = await endpointWith({
        verification: { provider: 'stripe', secret: STRIPE_SECRET, tolerance_seconds: 60 },
      });
      const payload = '{"id":"evt_3"}';
      const header = Stripe.webhooks.generateTestHeaderString({
        payload,
        secret: STRIPE_SECRET,
        timestamp: seconds() - 120,
      });

      const answer = await post(fixture, payload, { 'stripe-signature': header });

      expect(answer.status).toBe(401);
      expect((await stored(fixture))[0].verification_reason).toMatch(/timestamp/);
    });
  });

  describe('inbound auth', () => {
    it('basic: a capture without the credentials, or with wrong ones, gets 401 and nothing is stored', async () => {
      const fixture = await endpointWith({
        inbound_auth: { type: 'basic', username: 'stripe', password: 'inbound-password-1' },
      });
      const basic = (user: string, password: string) => ({
        authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
      });

      const answers = [
        await post(fixture, '{}'),
        await post(fixture, '{}', basic('stripe', 'inbound-password-2')),
        await post(fixture, '{}', basic('stripe', 'inbound-password-1')),
      ];

      expect(answers.map((answer) => answer.status)).toEqual([401, 401, 200]);
      expect((await stored(fixture)).map((row) => row.id)).toEqual([answers[2].json.id]);
      // The challenge, for the clients that send Basic credentials only when asked (RFC 9110 §11.6.1).
      for (const refused of answers.slice(0, 2))
        expect(refused.headers['www-authenticate']).toBe('Basic realm="hooktrail", charset="UTF-8"');
    });

    it('header: the named header must carry the value', async () => {
      const fixture = await endpointWith({
        inbound_auth: { type: 'header', name: 'x-webhook-token', value: 'tok-inbound-123456' },
      });

      const without = await post(fixture, '{}', { 'x-webhook-token': 'tok-inbound-12345' });
      const withIt = await post(fixture, '{}', { 'x-webhook-token': 'tok-inbound-123456' });

      expect([without.status, withIt.status]).toEqual([401, 200]);
      expect(without.headers['www-authenticate']).toBeUndefined();
      expect(await stored(fixture)).toHaveLength(1);
      const event = await api(
        sut.url,
        'GET',
        `/api/endpoints/${fixture.endpointId}/events/${withIt.json.id}`,
        { token: owner.accessToken },
      );
      expect(event.body.event.headers).not.toHaveProperty('x-webhook-token');
      expect(event.body.event.headers).toHaveProperty('content-type', 'application/json');
    });

    it('applies rules given when the endpoint is created to its first capture', async () => {
      const created = await api(sut.url, 'POST', '/api/endpoints', {
        token: owner.accessToken,
        body: {
          name: 'Created with rules',
          inbound_auth: { type: 'header', name: 'x-webhook-token', value: 'tok-from-creation' },
        },
      });
      expect(created.status).toBe(201);
      const fixture: EndpointFixture = {
        user: owner,
        endpointId: created.body.endpoint.id,
        captureUrl: `${sut.url}/in/${created.body.endpoint.public_token}`,
      };
      await addDestination(sut.url, fixture, `${sink.url}/hook`);

      const without = await post(fixture, '{}');
      const withIt = await post(fixture, '{}', { 'x-webhook-token': 'tok-from-creation' });

      expect([without.status, withIt.status]).toEqual([401, 200]);
      expect((await stored(fixture)).map((row) => row.id)).toEqual([withIt.json.id]);
    });
  });

  describe('dedup', () => {
    it('answers a repeat within the window with the first event, stores and forwards it once, and counts it', async () => {
      const fixture = await endpointWith({ dedup: { key: 'header:x-delivery-id', window_seconds: 60 } });

      const first = await post(fixture, '{"n":1}', { 'x-delivery-id': 'd-1' });
      const repeat = await post(fixture, '{"n":1}', { 'x-delivery-id': 'd-1' });
      const other = await post(fixture, '{"n":2}', { 'x-delivery-id': 'd-2' });
      const keyless = await post(fixture, '{"n":3}');

      expect(first.json).toEqual({ id: expect.any(String) });
      expect(repeat.status).toBe(200);
      expect(repeat.json).toEqual({ id: first.json.id, duplicate: true });
      const rows = await stored(fixture);
      expect(rows.map((row) => row.id)).toEqual([first.json.id, other.json.id, keyless.json.id]);
      expect(rows.map((row) => row.deliveries)).toEqual([1, 1, 1]);
      const event = await waitForEvent(sut.url, fixture, first.json.id, () => true);
      expect(event.duplicate_count).toBe(1);
    });

    it('takes the provider id, and a key whose window has passed is captured again', async () => {
      const fixture = await endpointWith({
        verification: { provider: 'github', secret: SHARED_SECRET },
        dedup: { key: 'provider', window_seconds: 1 },
      });
      const body = '{"action":"opened"}';
      const headers = {
        'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
        'x-hub-signature-256': await signGithub(SHARED_SECRET, body),
      };

      const first = await post(fixture, body, headers);
      const repeat = await post(fixture, body, headers);
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const late = await post(fixture, body, headers);

      expect(repeat.json).toEqual({ id: first.json.id, duplicate: true });
      expect(late.json.id).not.toBe(first.json.id);
      expect(late.json.duplicate).toBeUndefined();
    });

    it('does not let a request that fails verification claim the key', async () => {
      const fixture = await endpointWith({
        verification: { provider: 'github', secret: SHARED_SECRET, mode: 'flag' },
        dedup: { key: 'provider' },
      });
      const body = '{"action":"closed"}';
      const delivery = { 'x-github-delivery': 'forged-then-real' };

      const forged = await post(fixture, body, {
        ...delivery,
        'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      });
      const real = await post(fixture, body, {
        ...delivery,
        'x-hub-signature-256': await signGithub(SHARED_SECRET, body),
      });

      expect(real.json.duplicate).toBeUndefined();
      expect(real.json.id).not.toBe(forged.json.id);
    });

    it('answers every repeat sent at once with the one stored event', async () => {
      const fixture = await endpointWith({ dedup: { key: 'body:data.id' } });

      const answers = await Promise.all(
        Array.from({ length: 20 }, () => post(fixture, '{"data":{"id":"same"}}')),
      );

      const ids = new Set(answers.map((answer) => answer.json.id));
      expect(ids.size).toBe(1);
      expect(answers.filter((answer) => answer.json.duplicate === true)).toHaveLength(19);
      const [row] = await stored(fixture);
      expect(row.duplicate_count).toBe(19);
      expect(await stored(fixture)).toHaveLength(1);
    });

    it('takes a body key with a NUL character (kept as its hash, which PostgreSQL text can hold)', async () => {
      const fixture = await endpointWith({ dedup: { key: 'body:id' } });
      const body = '{"id":"evt\\u0000nul"}';

      const first = await post(fixture, body);
      const repeat = await post(fixture, body);
      const other = await post(fixture, '{"id":"evt\\u0000other"}');

      expect([first.status, repeat.status, other.status]).toEqual([200, 200, 200]);
      expect(repeat.json).toEqual({ id: first.json.id, duplicate: true });
      expect((await stored(fixture)).map((row) => row.id)).toEqual([first.json.id, other.json.id]);
    });
  });

  describe('destination filters', () => {
    async function addFilteredDestination(fixture: EndpointFixture, url: string, filter: object) {
      const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
        token: fixture.user.accessToken,
        body: { url, filter },
      });
      expect(created.status).toBe(201);
      return created.body.destination.id as string;
    }

    it('gives a destination only the events its filter matches, decided at capture', async () => {
      const fixture = await createEndpoint(sut.url, owner);
      const everything = await addDestination(sut.url, fixture, `${sink.url}/all`);
      const invoices = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
        token: fixture.user.accessToken,
        body: {
          url: `${sink.url}/invoices`,
          filter: {
            body: { type: { $startsWith: 'invoice.' } },
            headers: { 'x-env': { $in: ['live', 'test'] } },
          },
        },
      });
      expect(invoices.status).toBe(201);
      expect(invoices.body.destination.filter).toEqual({
        body: { type: { $startsWith: 'invoice.' } },
        headers: { 'x-env': { $in: ['live', 'test'] } },
      });

      const paid = await post(fixture, '{"type":"invoice.paid"}', { 'x-env': 'live' });
      const charge = await post(fixture, '{"type":"charge.failed"}', { 'x-env': 'live' });

      await routeQueued(db);
      const targets = async (eventId: string) =>
        (
          await db.query<{ destination_id: string }>(
            'select destination_id from deliveries where event_id = $1 order by destination_id',
            [eventId],
          )
        ).rows.map((row) => row.destination_id);
      expect(await targets(paid.json.id)).toEqual([everything, invoices.body.destination.id].sort());
      expect(await targets(charge.json.id)).toEqual([everything]);

      const routing = await api(
        sut.url,
        'GET',
        `/api/endpoints/${fixture.endpointId}/events/${charge.json.id}/routing`,
        { token: fixture.user.accessToken },
      );
      expect(routing.body.destinations).toEqual([
        { id: everything, url: `${sink.url}/all`, receives: true, reason: null },
        {
          id: invoices.body.destination.id,
          url: `${sink.url}/invoices`,
          receives: false,
          reason: expect.stringContaining('body.type'),
        },
      ]);
      const trial = await api(
        sut.url,
        'POST',
        `/api/endpoints/${fixture.endpointId}/events/${charge.json.id}/filter-test`,
        { token: fixture.user.accessToken, body: { filter: { body: { type: { $contains: 'charge' } } } } },
      );
      expect(trial.body).toEqual({ matches: true, reason: null });
    });

    it('replays an event only to the destinations whose filter matches it now, and answers 409 naming why when none does', async () => {
      const fixture = await createEndpoint(sut.url, owner);
      const everything = await addDestination(sut.url, fixture, `${sink.url}/all`);
      const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
        token: fixture.user.accessToken,
        body: { url: `${sink.url}/invoices`, filter: { body: { type: { $startsWith: 'invoice.' } } } },
      });
      const invoices = created.body.destination.id;
      const paid = await post(fixture, '{"type":"invoice.paid"}');
      const charge = await post(fixture, '{"type":"charge.failed"}');
      await routeQueued(db);
      const replay = (answer: RawResponse) =>
        api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/events/${answer.json.id}/replay`, {
          token: fixture.user.accessToken,
        });
      const targets = async (answer: RawResponse, dispatch: string) =>
        (
          await db.query<{ destination_id: string }>(
            'select destination_id from deliveries where event_id = $1 and dispatch_id = $2 order by destination_id',
            [answer.json.id, dispatch],
          )
        ).rows.map((row) => row.destination_id);

      const paidAgain = await replay(paid);
      const chargeAgain = await replay(charge);
      expect([paidAgain.status, chargeAgain.status]).toEqual([200, 200]);
      expect(await targets(paid, paidAgain.body.jobId)).toEqual([everything, invoices].sort());
      expect(await targets(charge, chargeAgain.body.jobId)).toEqual([everything]);

      await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}/destinations/${everything}`, {
        token: fixture.user.accessToken,
        body: { filter: { method: 'PUT' } },
      });
      const before = (await db.query('select 1 from deliveries where event_id = $1', [charge.json.id]))
        .rowCount;
      const refused = await replay(charge);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(
        new RegExp(
          `^no active destination would receive this event: ${sink.url}/all: .*method.*; ${sink.url}/invoices: .*body\\.type`,
        ),
      );
      expect(
        (await db.query('select 1 from deliveries where event_id = $1', [charge.json.id])).rowCount,
      ).toBe(before);
    });

    it('does not replay an event whose signature failed while verification is enforced', async () => {
      const fixture = await endpointWith({
        verification: { provider: 'stripe', secret: STRIPE_SECRET, mode: 'enforce' },
      });
      const refused = await post(fixture, '{"type":"invoice.paid"}', { 'stripe-signature': 't=1,v1=00' });
      expect(refused.status).toBe(401);

      const replay = await api(
        sut.url,
        'POST',
        `/api/endpoints/${fixture.endpointId}/events/${refused.json.id}/replay`,
        { token: fixture.user.accessToken },
      );

      expect(replay.status).toBe(409);
      expect(replay.body.message).toContain('the signature did not verify and verification is enforced');
      expect(await stored(fixture)).toMatchObject([{ id: refused.json.id, deliveries: 0 }]);
    });

    it('a changed filter applies to the next capture', async () => {
      const fixture = await createEndpoint(sut.url, owner);
      const id = await addDestination(sut.url, fixture, `${sink.url}/changing`);
      const deliveries = async (answer: RawResponse) =>
        (await db.query('select 1 from deliveries where event_id = $1', [answer.json.id])).rowCount;

      const before = await post(fixture, '{"kind":"b"}');
      await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}/destinations/${id}`, {
        token: fixture.user.accessToken,
        body: { filter: { body: { kind: 'a' } } },
      });
      const after = await post(fixture, '{"kind":"b"}');
      await routeQueued(db);

      expect([await deliveries(before), await deliveries(after)]).toEqual([1, 0]);
    });

    it('a filtered destination switched back on applies its filter to the next capture', async () => {
      const fixture = await createEndpoint(sut.url, owner);
      const id = await addFilteredDestination(fixture, `${sink.url}/switched`, { body: { kind: 'a' } });
      const setActive = (isActive: boolean) =>
        api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}/destinations/${id}`, {
          token: fixture.user.accessToken,
          body: { is_active: isActive },
        });
      await setActive(false);
      // Judged without the filter of the inactive destination (the rules this process now holds).
      expect((await post(fixture, '{"kind":"b"}')).status).toBe(200);

      await setActive(true);
      const skipped = await post(fixture, '{"kind":"b"}');
      const matched = await post(fixture, '{"kind":"a"}');

      await routeQueued(db);
      const deliveries = await db.query<{ event_id: string }>(
        'select event_id from deliveries where destination_id = $1',
        [id],
      );
      expect(deliveries.rows.map((row) => row.event_id)).toEqual([matched.json.id]);
      expect(skipped.status).toBe(200);
    });

    it("moves the endpoint's rules version only when what a capture is judged by changes", async () => {
      const fixture = await createEndpoint(sut.url, owner);
      const version = async () =>
        (
          await db.query<{ rules_version: number }>('select rules_version from endpoints where id = $1', [
            fixture.endpointId,
          ])
        ).rows[0].rules_version;
      const patch = (path: string, body: Record<string, unknown>) =>
        api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}${path}`, {
          token: fixture.user.accessToken,
          body,
        });

      const plain = await addDestination(sut.url, fixture, `${sink.url}/plain`);
      await patch(`/destinations/${plain}`, { is_active: false });
      await patch('', { name: 'Renamed' });
      await patch('', { is_active: false });
      await patch('', { is_active: true });
      // Still judged as an endpoint that never had rules: its first capture in a process commits once.
      expect(await version()).toBe(0);

      const filtered = await addFilteredDestination(fixture, `${sink.url}/filtered`, { method: 'POST' });
      expect(await version()).toBe(1);
      await patch(`/destinations/${filtered}`, { filter: { method: 'POST' } });
      await patch(`/destinations/${filtered}`, { is_active: false });
      expect(await version()).toBe(2);
      await patch('', { dedup: { key: 'header:x-id' } });
      expect(await version()).toBe(3);
    });

    it.each([
      [{ body: { amount: { $gt: [1] } } }, 'filter.body.amount.$gt'],
      [{ bodies: {} }, 'filter.bodies'],
      [{ body: { $or: [] } }, 'filter.body.$or'],
      [{ headers: { 'X-Env': 'live' } }, 'filter.headers.X-Env'],
      [{ body: { a: { $regex: 'x' } } }, 'filter.body.a.$regex'],
      ['not an object', 'filter'],
    ])('refuses the bad rule %j with 400 naming %s, and changes nothing', async (filter, path) => {
      const fixture = await createEndpoint(sut.url, owner);

      const answer = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
        token: fixture.user.accessToken,
        body: { url: `${sink.url}/x`, filter },
      });

      expect(answer.status).toBe(400);
      expect(answer.body.message.join(' ')).toContain(path);
      expect(
        (await db.query('select 1 from destinations where endpoint_id = $1', [fixture.endpointId])).rowCount,
      ).toBe(0);
    });
  });

  describe('the rules in the API', () => {
    it('answers rule secrets masked, keeps a secret left out of a PATCH, and removes a rule with null', async () => {
      const fixture = await endpointWith({
        verification: { provider: 'stripe', secret: STRIPE_SECRET },
        inbound_auth: { type: 'header', name: 'x-token', value: 'inbound-value-abcd' },
        dedup: { key: 'provider' },
      });

      const changed = await setRules(fixture, { verification: { provider: 'stripe', mode: 'flag' } });

      expect(changed.body.endpoint.verification).toEqual({
        provider: 'stripe',
        secret: `••••${STRIPE_SECRET.slice(-4)}`,
        mode: 'flag',
        tolerance_seconds: 300,
      });
      expect(changed.body.endpoint.inbound_auth).toEqual({
        type: 'header',
        name: 'x-token',
        value: '••••abcd',
      });
      expect(changed.body.endpoint.dedup).toEqual({ key: 'provider', window_seconds: 86400 });
      expect(JSON.stringify(changed.body)).not.toContain(STRIPE_SECRET);
      const body = '{"id":"evt_kept"}';
      const answer = await post(fixture, body, {
        ...(await PROVIDERS[0].sign(body, STRIPE_SECRET)),
        'x-token': 'inbound-value-abcd',
      });
      expect((await stored(fixture)).find((row) => row.id === answer.json.id)?.verification_status).toBe(
        'verified',
      );

      const removed = await setRules(fixture, { inbound_auth: null });
      expect(removed.body.endpoint.inbound_auth).toBeNull();
      expect((await post(fixture, '{"id":"evt_open"}')).status).toBe(200);
    });

    it.each([
      [{ verification: { provider: 'paypal', secret: 'x' } }, 'verification.provider'],
      [{ verification: { provider: 'stripe' } }, 'verification.secret is required'],
      [{ verification: { provider: 'stripe', secret: 's', mode: 'strict' } }, 'verification.mode'],
      [{ verification: { provider: 'github', secret: 's', header: 'x-sig' } }, 'verification.header'],
      [{ verification: { provider: 'hmac', secret: 's' } }, 'verification.header'],
      [
        { verification: { provider: 'slack', secret: 's', tolerance_seconds: 0 } },
        'verification.tolerance_seconds',
      ],
      [{ inbound_auth: { type: 'bearer' } }, 'inbound_auth.type'],
      [{ inbound_auth: { type: 'basic', username: 'a:b', password: 'p' } }, 'inbound_auth.username'],
      [{ inbound_auth: { type: 'header', name: 'X Token', value: 'v' } }, 'inbound_auth.name'],
      [{ dedup: { key: 'cookie:x' } }, 'dedup.key'],
      [{ dedup: { key: 'body:id', window_seconds: 604801 } }, 'dedup.window_seconds'],
      [{ dedup: { key: 'provider' } }, 'dedup.key "provider"'],
    ])('refuses %j with 400 naming the field, and changes nothing', async (rules, field) => {
      const fixture = await createEndpoint(sut.url, owner);

      const answer = await setRules(fixture, { name: 'Renamed', ...rules });

      expect(answer.status).toBe(400);
      expect(answer.body.message.join(' ')).toContain(field);
      const endpoint = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}`, {
        token: fixture.user.accessToken,
      });
      expect(endpoint.body.endpoint).toMatchObject({
        name: 'Payments',
        verification: null,
        inbound_auth: null,
        dedup: null,
      });
    });
  });

  describe('two API processes', () => {
    let second: ServiceProcess;
    let secondUrl: string;
    beforeAll(async () => {
      second = await spawnService({
        APP_ROLE: 'api',
        DATABASE_URL: sut.env.DATABASE_URL,
        REDIS_URL: sut.env.REDIS_URL,
        REDIS_PREFIX: sut.env.REDIS_PREFIX,
        LOG_LEVEL: 'warn',
      });
      secondUrl = `http://127.0.0.1:${second.port}`;
    });
    afterAll(() => stopService(second));

    it('store one event for a dedup key sent to both at once, and answer every repeat with it', async () => {
      const fixture = await endpointWith({ dedup: { key: 'header:x-delivery-id' } });

      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, n) =>
          post(fixture, `{"n":${n}}`, { 'x-delivery-id': 'raced' }, n % 2 ? secondUrl : sut.url),
        ),
      );

      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expect(new Set(answers.map((answer) => answer.json.id)).size).toBe(1);
      const rows = await stored(fixture);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ duplicate_count: 29, deliveries: 1 });
    });

    it('apply a rule changed through one process to the next capture of the other', async () => {
      const fixture = await endpointWith({});
      expect((await post(fixture, '{}', {}, secondUrl)).status).toBe(200);

      await setRules(fixture, { inbound_auth: { type: 'header', name: 'x-token', value: 'now-required-1' } });

      expect((await post(fixture, '{}', {}, secondUrl)).status).toBe(401);
      expect((await post(fixture, '{}', { 'x-token': 'now-required-1' }, secondUrl)).status).toBe(200);
    });
  });

  describe('with a worker process', () => {
    let worker: ServiceProcess;
    beforeAll(async () => {
      worker = await spawnService({
        APP_ROLE: 'worker',
        DATABASE_URL: sut.env.DATABASE_URL,
        REDIS_URL: sut.env.REDIS_URL,
        REDIS_PREFIX: sut.env.REDIS_PREFIX,
        LOG_LEVEL: 'warn',
      });
    });
    afterAll(() => stopService(worker));

    it('has a worker add the repeats to the event itself, each once', async () => {
      const fixture = await endpointWith({ dedup: { key: 'body:data.id' } });
      // Repeats of an event stored by an earlier statement are appended to event_repeats, not to the event.
      await post(fixture, '{"data":{"id":"folded"}}');
      await Promise.all(Array.from({ length: 5 }, () => post(fixture, '{"data":{"id":"folded"}}')));
      const [event] = await stored(fixture);
      const folded = async () =>
        (
          await db.query<{ own: number; waiting: number }>(
            `select duplicate_count as own,
                    (select count(*)::int from event_repeats where event_id = $1) as waiting
             from events where id = $1`,
            [event.id],
          )
        ).rows[0];
      const deadline = Date.now() + 10_000;
      while ((await folded()).waiting > 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await folded()).toEqual({ own: 5, waiting: 0 });
      expect((await stored(fixture))[0].duplicate_count).toBe(5);
    });
  });
});
