import { Client } from 'pg';
import { api } from './support/api-client';
import { HttpsDestination } from './support/https-destination';
import { startTestApp, type TestApp } from './support/test-app';
import { capture, createEndpoint, waitForEvent } from './support/webhook-fixtures';

/**
 * With DELIVERY_ALLOW_PRIVATE_NETWORKS off, the sender checks the address it actually dials (after
 * DNS), so a destination that passed the creation check and later points at a private address (DNS
 * rebinding, a name that resolves to loopback) is still refused. Rows are written straight to the
 * database to stand for such destinations. Only loopback addresses are dialled here: a guard that
 * failed would reach the local sink, which must stay silent.
 */
describe('delivery SSRF guard at connect time', () => {
  let sut: TestApp;
  let sink: HttpsDestination;
  let database: Client;

  beforeAll(async () => {
    sink = await HttpsDestination.start();
    sut = await startTestApp({
      DELIVERY_ALLOW_PRIVATE_NETWORKS: 'false',
      DELIVERY_RETRY_DELAYS_MS: '100,100,100,100',
    });
    database = new Client({ connectionString: sut.env.DATABASE_URL });
    await database.connect();
  });
  afterAll(async () => {
    await database.end();
    await sut.close();
    await sink.close();
  });

  it('refuses 10.0.0.1 and 169.254.169.254 when the destination is created', async () => {
    const fixture = await createEndpoint(sut.url);
    for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/latest/meta-data']) {
      const created = await api(sut.url, 'POST', `/api/endpoints/${fixture.endpointId}/destinations`, {
        token: fixture.user.accessToken,
        body: { url },
      });
      expect(created.status).toBe(400);
    }
  });

  const port = () => new URL(sink.url).port;
  it.each([
    ['127.0.0.1', () => `https://127.0.0.1:${port()}/`],
    ['[::1]', () => `https://[::1]:${port()}/`],
    ['IPv4-mapped ::ffff:127.0.0.1', () => `https://[::ffff:127.0.0.1]:${port()}/`],
    ['a hostname resolving to 127.0.0.1', () => `https://localhost:${port()}/`],
  ])('refuses to dial %s, records why, and dead-letters', async (_label, url) => {
    const fixture = await createEndpoint(sut.url);
    await database.query(
      `insert into destinations (id, endpoint_id, url) values (gen_random_uuid(), $1, $2)`,
      [fixture.endpointId, url()],
    );

    const eventId = await capture(fixture);
    const event = await waitForEvent(sut.url, fixture, eventId, (seen) => seen.status === 'dead_letter');

    const [delivery] = event.deliveries;
    expect(delivery.attempt_count).toBe(5);
    expect(delivery.response_code).toBeNull();
    expect(delivery.attempts[0].error).toMatch(
      /refused: the destination resolves to a private or reserved address/,
    );
    expect(sink.received).toHaveLength(0);
  });
});
