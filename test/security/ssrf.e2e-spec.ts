import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Client } from 'pg';
import { isPrivateAddress } from '../../src/common/network/private-address';
import { api } from '../support/api-client';
import { HttpsDestination } from '../support/https-destination';
import { startTestApp, type TestApp } from '../support/test-app';
import { capture, createEndpoint, type EndpointFixture, waitForEvent } from '../support/webhook-fixtures';

const REFUSED = /refused: the destination resolves to a private or reserved address/;

/**
 * With DELIVERY_ALLOW_PRIVATE_NETWORKS off, private destinations are refused twice: a literal address
 * when the destination is created (400 naming the url), and, whatever the URL says, the address the
 * sender actually dials after DNS (DNS rebinding, a name that resolves to a private address, a row
 * written while the flag was on). Rows are written straight to the database to stand for such
 * destinations. Loopback spellings dial the local sink, which must stay silent; the others would time out
 * (DELIVERY_TIMEOUT_MS is short) or fail otherwise, so only the recorded refusal passes.
 * Redirects are never followed at all (test/delivery.e2e-spec.ts: "does not follow redirects"), so a
 * redirect cannot lead to a private address either.
 */
describe('SSRF: private destinations refused at creation and at connect time', () => {
  let sut: TestApp;
  let sink: HttpsDestination;
  let database: Client;

  beforeAll(async () => {
    sink = await HttpsDestination.start();
    sut = await startTestApp({
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false',
      DELIVERY_RETRY_DELAYS_MS: '100,100,100,100',
      DELIVERY_TIMEOUT_MS: '3000',
    });
    database = new Client({ connectionString: sut.env.DATABASE_URL });
    await database.connect();
  });
  afterAll(async () => {
    await database.end();
    await sut.close();
    await sink.close();
  });

  const port = () => new URL(sink.url).port;
  /** The matrix: every kind of private or reserved address, in the spellings that try to hide it. */
  const matrix: [string, () => string][] = [
    ['loopback 127.0.0.1', () => `https://127.0.0.1:${port()}/`],
    ['loopback 127.1.2.3', () => `https://127.1.2.3:${port()}/`],
    ['decimal 2130706433', () => `https://2130706433:${port()}/`],
    ['octal 0177.0.0.1', () => `https://0177.0.0.1:${port()}/`],
    ['hexadecimal 0x7f000001', () => `https://0x7f000001:${port()}/`],
    ['IPv6 loopback [::1]', () => `https://[::1]:${port()}/`],
    ['IPv4-mapped [::ffff:127.0.0.1]', () => `https://[::ffff:127.0.0.1]:${port()}/`],
    ['RFC 1918 10.0.0.1', () => 'https://10.0.0.1/hook'],
    ['RFC 1918 172.16.0.1', () => 'https://172.16.0.1/hook'],
    ['RFC 1918 192.168.1.1', () => 'https://192.168.1.1/hook'],
    ['link-local 169.254.1.1', () => 'https://169.254.1.1/hook'],
    ['cloud metadata 169.254.169.254', () => 'https://169.254.169.254/latest/meta-data/'],
    [
      'IPv4-mapped metadata [::ffff:169.254.169.254]',
      () => 'https://[::ffff:169.254.169.254]/latest/meta-data/',
    ],
    ['CGNAT 100.64.0.1', () => 'https://100.64.0.1/hook'],
    ['CGNAT 100.127.255.254', () => 'https://100.127.255.254/hook'],
    ['unspecified 0.0.0.0', () => `https://0.0.0.0:${port()}/`],
    ['unspecified [::]', () => `https://[::]:${port()}/`],
    ['IPv6 unique-local [fc00::1]', () => 'https://[fc00::1]/hook'],
    ['IPv6 unique-local [fd12:3456::1]', () => 'https://[fd12:3456::1]/hook'],
    ['IPv6 link-local [fe80::1]', () => 'https://[fe80::1]/hook'],
    ['the name localhost', () => `https://localhost:${port()}/`],
  ];

  it.each(matrix)('refuses to create a destination at %s: 400 naming the url', async (_label, url) => {
    const fixture = await createEndpoint(sut.url);
    const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
      token: fixture.user.accessToken,
      body: { url: url() },
    });
    expect(created.status).toBe(400);
    expect(created.body.message).toMatch(
      /^url must not point to a loopback, private, link-local or reserved address/,
    );
  });

  it.each(matrix)(
    'refuses to create a notification channel at %s: 400 naming the target',
    async (_label, url) => {
      const { user } = await createEndpoint(sut.url);
      const created = await api(sut.url, 'POST', '/api/notification-channels', {
        token: user.accessToken,
        body: { type: 'webhook', target: url(), events: ['dead_letter'] },
      });
      expect(created.status).toBe(400);
      expect(created.body.message).toMatch(
        /^target must not point to a loopback, private, link-local or reserved address/,
      );
    },
  );

  /** Captures once to an endpoint whose destinations are the given URLs, and returns each one's first attempt. */
  async function firstAttempts(fixture: EndpointFixture, urls: string[]) {
    for (const url of urls)
      await database.query(
        `insert into destinations (id, endpoint_id, url) values (gen_random_uuid(), $1, $2)`,
        [fixture.endpointId, url],
      );
    const eventId = await capture(fixture);
    // Until the router has made them, the event has no deliveries: wait for one per URL, each attempted.
    const event = await waitForEvent(
      sut.url,
      fixture,
      eventId,
      (seen) =>
        seen.deliveries.length === urls.length &&
        seen.deliveries.every((delivery: { attempts: unknown[] }) => delivery.attempts.length > 0),
    );
    return new Map<string, { response_code: number | null; error: string }>(
      event.deliveries.map((delivery: { destination: { url: string }; attempts: never[] }) => [
        delivery.destination.url,
        delivery.attempts[0],
      ]),
    );
  }

  it('refuses to dial every address of the matrix, whatever the spelling, and records why', async () => {
    const fixture = await createEndpoint(sut.url);
    const urls = matrix.map(([, url]) => url());
    const attempts = await firstAttempts(fixture, urls);
    const notRefused = urls.filter((url) => !REFUSED.test(attempts.get(url)?.error ?? ''));
    expect(notRefused).toEqual([]);
    expect([...attempts.values()].every((attempt) => attempt.response_code === null)).toBe(true);
    expect(sink.received).toHaveLength(0);
  });

  it('accepts a name that is not an address at creation, and refuses to dial it when it resolves to a private address', async () => {
    const name = hostname();
    const addresses = await lookup(name, { all: true });
    // precondition: this machine's own name resolves to its loopback or private address (/etc/hosts)
    expect(addresses.map(({ address }) => [address, isPrivateAddress(address)])).toEqual(
      addresses.map(({ address }) => [address, true]),
    );
    const fixture = await createEndpoint(sut.url);
    const url = `https://${name}:${port()}/`;
    const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
      token: fixture.user.accessToken,
      body: { url },
    });
    expect(created.status).toBe(201);
    const eventId = await capture(fixture);
    const event = await waitForEvent(sut.url, fixture, eventId, (seen) => seen.status === 'dead_letter');
    expect(event.deliveries[0].attempts[0].error).toMatch(REFUSED);
    expect(sink.received).toHaveLength(0);
  });

  it('refuses to send to a notification channel whose name resolves to a private address', async () => {
    const { user } = await createEndpoint(sut.url);
    const created = await api(sut.url, 'POST', '/api/notification-channels', {
      token: user.accessToken,
      body: { type: 'slack', target: `https://${hostname()}:${port()}/`, events: ['dead_letter'] },
    });
    expect(created.status).toBe(201);
    const tested = await api(sut.url, 'POST', `/api/notification-channels/${created.body.channel.id}/test`, {
      token: user.accessToken,
    });
    expect(tested.body.ok).toBe(false);
    expect(tested.body.error).toMatch(REFUSED);
    expect(sink.received).toHaveLength(0);
  });

  it.each([
    ['127.0.0.1', () => `https://127.0.0.1:${port()}/`],
    ['[::1]', () => `https://[::1]:${port()}/`],
    ['IPv4-mapped ::ffff:127.0.0.1', () => `https://[::ffff:127.0.0.1]:${port()}/`],
    ['a hostname resolving to 127.0.0.1', () => `https://localhost:${port()}/`],
  ])('refuses every retry to %s too, and dead-letters after 5 attempts', async (_label, url) => {
    const fixture = await createEndpoint(sut.url);
    await firstAttempts(fixture, [url()]);
    const [eventId] = (
      await database.query('select id from events where endpoint_id = $1', [fixture.endpointId])
    ).rows.map((row) => row.id as string);
    const event = await waitForEvent(sut.url, fixture, eventId, (seen) => seen.status === 'dead_letter');
    const [delivery] = event.deliveries;
    expect(delivery.attempt_count).toBe(5);
    expect(delivery.response_code).toBeNull();
    expect(delivery.attempts.every((attempt: { error: string }) => REFUSED.test(attempt.error))).toBe(true);
    expect(sink.received).toHaveLength(0);
  });
});
