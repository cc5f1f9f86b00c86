import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { getQueueToken } from '@nestjs/bull';
import type { Queue } from 'bull';
import { Client } from 'pg';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { DELIVERY_QUEUE } from '../src/jobs/delivery-jobs';
import { api } from './support/api-client';
import { HttpsDestination, type ReceivedRequest } from './support/https-destination';
import { type ServiceProcess, spawnService, stopService } from './support/service-process';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';

function rotate(databaseUrl: string, keys: Record<string, string>) {
  const result = spawnSync(process.execPath, ['dist/src/cli.js', 'rotate-encryption-key'], {
    cwd: join(__dirname, '..'),
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, ...keys },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

/** Every row of every text, JSON or bytea column of the database that contains `needle`. */
async function findInDatabase(db: Client, needle: string): Promise<string[]> {
  const { rows: columns } = await db.query<{ table_name: string; column_name: string; data_type: string }>(
    `select table_name, column_name, data_type from information_schema.columns
     where table_schema = 'public' and data_type in ('text', 'character varying', 'json', 'jsonb', 'bytea')`,
  );
  const found: string[] = [];
  for (const { table_name: table, column_name: column, data_type: type } of columns) {
    const test =
      type === 'bytea'
        ? `position(convert_to($1, 'UTF8') in "${column}") > 0`
        : `strpos("${column}"::text, $1) > 0`;
    const { rows } = await db.query(`select count(*)::int as n from "${table}" where ${test}`, [needle]);
    if (rows[0].n > 0) found.push(`${table}.${column}`);
  }
  return found;
}

function verifySigned(request: ReceivedRequest, secret: string): void {
  new Webhook(Buffer.from(secret, 'utf8').toString('base64')).verify(request.body.toString('utf8'), {
    'webhook-id': String(request.headers['hooktrail-id']),
    'webhook-timestamp': String(request.headers['hooktrail-timestamp']),
    'webhook-signature': String(request.headers['hooktrail-signature']),
  });
}

describe('secrets at rest (AES-256-GCM under ENCRYPTION_KEY)', () => {
  let sut: TestApp;
  let db: Client;
  let sink: HttpsDestination;
  let fixture: EndpointFixture;
  let destinationId: string;
  const secret = `whsec_${randomBytes(16).toString('hex')}`;
  /** The endpoint's rule secrets: its Stripe verification secret and inbound password. */
  const stripeSecret = `whsec_${randomBytes(16).toString('hex')}`;
  const inboundPassword = randomBytes(12).toString('hex');
  /** A webhook notification channel's signing secret, made by the service. */
  let channelSecret: string;
  /** The headers a capture needs: the inbound credential and a Stripe signature of the body. */
  const signed = (payload: string) => ({
    headers: {
      authorization: `Basic ${Buffer.from(`provider:${inboundPassword}`).toString('base64')}`,
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: stripeSecret }),
    },
  });
  const sealedValue = async () =>
    (await db.query('select secret from destinations where id = $1', [destinationId])).rows[0]
      .secret as string;
  const readSecret = async (baseUrl: string) =>
    (
      await api(baseUrl, 'GET', `/api/endpoints/${fixture.endpointId}/destinations/${destinationId}`, {
        token: fixture.user.accessToken,
      })
    ).body.destination.secret;

  beforeAll(async () => {
    // No ENCRYPTION_KEY: outside production a key is made once and kept in the database.
    sut = await startTestApp();
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    sink = await HttpsDestination.start();
    fixture = await createEndpoint(sut.url);
    destinationId = await addDestination(sut.url, fixture, sink.url, secret);
    const rules = await api(sut.url, 'PATCH', `/api/endpoints/${fixture.endpointId}`, {
      token: fixture.user.accessToken,
      body: {
        verification: { provider: 'stripe', secret: stripeSecret },
        inbound_auth: { type: 'basic', username: 'provider', password: inboundPassword },
      },
    });
    expect(rules.status).toBe(200);
    const channel = await api(sut.url, 'POST', '/api/notification-channels', {
      token: fixture.user.accessToken,
      body: { type: 'webhook', target: 'https://hooks.example.com/alerts', events: ['dead_letter'] },
    });
    expect(channel.status).toBe(201);
    channelSecret = channel.body.channel.secret;
  });
  afterAll(async () => {
    await db.end();
    await sut.close();
    await sink.close();
  });

  it('stores a destination secret sealed, nowhere in plain text, returns it through the API and signs with it', async () => {
    for (const plain of [secret, stripeSecret, inboundPassword, channelSecret])
      expect(await findInDatabase(db, plain)).toEqual([]);
    expect(await sealedValue()).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(await readSecret(sut.url)).toBe(secret);
    const endpoint = await api(sut.url, 'GET', `/api/endpoints/${fixture.endpointId}`, {
      token: fixture.user.accessToken,
    });
    expect(endpoint.body.endpoint.destinations[0].secret).toBe(secret);
    expect(endpoint.body.endpoint.verification.secret).toBe(`••••${stripeSecret.slice(-4)}`);
    expect(endpoint.body.endpoint.inbound_auth.password).toBe(`••••${inboundPassword.slice(-4)}`);

    const payload = '{"type":"invoice.paid"}';
    const request = signed(payload);
    await capture(fixture, payload, request);
    const [received] = await sink.waitForRequests(1);
    expect(() => verifySigned(received, secret)).not.toThrow();
    // The inbound credential is neither stored with the event nor forwarded.
    expect(received.headers).not.toHaveProperty('authorization');
    expect(await findInDatabase(db, request.headers.authorization.slice('Basic '.length))).toEqual([]);
  });

  it('rotates to a new key with the CLI; a service with only the new key reads and signs with every secret', async () => {
    const before = await sealedValue();
    const newKey = randomBytes(32).toString('base64');
    const rotated = rotate(sut.env.DATABASE_URL, { ENCRYPTION_KEY: newKey });
    expect(rotated).toMatchObject({ status: 0, stderr: '' });
    // The destination's secret, the endpoint's two rule secrets and the notification channel's secret.
    const keyId = rotated.stdout.match(/^4 secret\(s\) sealed anew under key ([0-9a-f]{8});/)?.[1];
    expect(keyId).toBeDefined();
    const after = await sealedValue();
    expect(after.startsWith(`v1.${keyId}.`)).toBe(true);
    expect(after).not.toBe(before);
    const channelRow = await db.query('select sealed_secret from notification_channels');
    expect(channelRow.rows[0].sealed_secret.startsWith(`v1.${keyId}.`)).toBe(true);
    for (const plain of [secret, stripeSecret, inboundPassword, channelSecret])
      expect(await findInDatabase(db, plain)).toEqual([]);
    // Again: nothing left to seal.
    expect(rotate(sut.env.DATABASE_URL, { ENCRYPTION_KEY: newKey }).stdout).toMatch(
      /^0 secret\(s\) sealed anew/,
    );

    // A secret an earlier version stored in plain text: the service seals it when it starts.
    const legacyId = await addDestination(sut.url, await createEndpoint(sut.url), sink.url, 'sealed for now');
    await db.query(`update destinations set secret = 'legacy-plain-secret' where id = $1`, [legacyId]);

    // The service under test still holds the old key: its worker would take delivery jobs it cannot open
    // (and put them back for a later retry). Only the rotated service works the queue from here on.
    await sut.app.get<Queue>(getQueueToken(DELIVERY_QUEUE)).pause(true);
    let rotatedService: ServiceProcess | undefined;
    try {
      rotatedService = await spawnService({ ...serviceEnv(sut), APP_ROLE: 'all', ENCRYPTION_KEY: newKey });
      const baseUrl = `http://127.0.0.1:${rotatedService.port}`;
      expect(await readSecret(baseUrl)).toBe(secret);
      const legacy = await db.query('select secret from destinations where id = $1', [legacyId]);
      expect(legacy.rows[0].secret.startsWith(`v1.${keyId}.`)).toBe(true);
      expect(await findInDatabase(db, 'legacy-plain-secret')).toEqual([]);
      const rotatedFixture = { ...fixture, captureUrl: fixture.captureUrl.replace(sut.url, baseUrl) };
      const eventId = await capture(rotatedFixture, '{"n":2}', signed('{"n":2}'));
      const [, second] = await sink.waitForRequests(2);
      expect(() => verifySigned(second, secret)).not.toThrow();
      const event = await db.query('select verification_status from events where id = $1', [eventId]);
      expect(event.rows[0].verification_status).toBe('verified');
    } finally {
      if (rotatedService) await stopService(rotatedService);
    }
  });

  it('does not start with a key that opens none of the stored secrets, naming the key they need', async () => {
    const service = await spawnService(
      { ...serviceEnv(sut), ENCRYPTION_KEY: randomBytes(32).toString('base64') },
      { waitForHealth: false },
    );
    expect(await service.exited).toBe(1);
    expect(service.output().trim()).toMatch(
      /^Stored secrets are sealed under key [0-9a-f]{8}, which is neither ENCRYPTION_KEY \([0-9a-f]{8}\) nor ENCRYPTION_KEY_PREVIOUS/,
    );
  });
});

/** The environment of the service under test, for another process on the same database and Redis. */
function serviceEnv(sut: TestApp): Record<string, string> {
  return {
    DATABASE_URL: sut.env.DATABASE_URL,
    REDIS_URL: sut.env.REDIS_URL,
    REDIS_PREFIX: sut.env.REDIS_PREFIX,
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    LOG_LEVEL: 'warn',
  };
}
