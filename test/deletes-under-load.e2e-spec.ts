import { Client } from 'pg';
import { api } from './support/api-client';
import { eventually } from './support/eventually';
import { answer, HttpsDestination } from './support/https-destination';
import { type ServiceProcess, stopService } from './support/service-process';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, createEndpoint, type EndpointFixture } from './support/webhook-fixtures';
import { spawnWorker } from './reliability/support/processes';
import { acknowledgedIds, captureAtRate } from './reliability/support/provider-load';

const EVENTS = 300;
const ROUNDS = 3;

/**
 * The worker records attempts in transactions that lock events, then their deliveries, then the
 * destinations' failure counts; deleting an endpoint or a destination cascades through the same rows.
 * A deletion must never lose that race with a 500 (a deadlock PostgreSQL broke by ending the delete).
 */
describe('deleting while the worker records attempts', () => {
  let sut: TestApp;
  let worker: ServiceProcess;
  let db: Client;
  let failing: HttpsDestination;

  beforeAll(async () => {
    // Every attempt fails at once and is retried within a second or so: attempts are recorded all the
    // time, by a worker process of its own (the deletes are answered by the test's API process).
    failing = await HttpsDestination.start(answer(500, 'down'));
    sut = await startTestApp({ APP_ROLE: 'api', DELIVERY_RETRY_DELAYS_MS: '300,600,900,1200' });
    worker = await spawnWorker(sut.env);
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    if (worker) await stopService(worker);
    await sut?.close();
    await failing?.close();
  });

  /**
   * An endpoint with two failing destinations and its events, once all are routed and attempts are being
   * recorded; with the number of events stored (a capture the machine could not store in time is answered 503, not stored).
   */
  async function busyEndpoint(): Promise<{
    fixture: EndpointFixture;
    destinations: string[];
    stored: number;
  }> {
    const fixture = await createEndpoint(sut.url);
    const destinations = [
      await addDestination(sut.url, fixture, `${failing.url}/a`),
      await addDestination(sut.url, fixture, `${failing.url}/b`),
    ];
    const stored = acknowledgedIds(
      await captureAtRate(fixture.captureUrl, { ratePerS: 300, total: EVENTS }),
    ).length;
    expect(stored).toBeGreaterThan(EVENTS / 2);
    // Every event routed (a delivery for each destination: one deleted before its event is routed gets
    // none, by design), and attempts being recorded.
    await eventually(
      async () =>
        (
          await db.query(
            `select count(*)::int as made, (count(*) filter (where d.attempt_count > 0))::int as attempted
             from deliveries d join events e on e.id = d.event_id where e.endpoint_id = $1`,
            [fixture.endpointId],
          )
        ).rows[0] as { made: number; attempted: number },
      ({ made, attempted }) => made === stored * destinations.length && attempted >= stored / 2,
      30_000,
    );
    return { fixture, destinations, stored };
  }

  const rows = async (sql: string, id: string) => (await db.query(sql, [id])).rowCount;

  it(`deletes an endpoint mid-drain, ${ROUNDS} times, each answered 200 with everything under it gone`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { fixture } = await busyEndpoint();

      const deleted = await api(sut.url, 'DELETE', `/api/endpoints/${fixture.endpointId}`, {
        token: fixture.user.accessToken,
      });

      expect(deleted).toMatchObject({ status: 200, body: { ok: true } });
      expect(await rows('select 1 from events where endpoint_id = $1', fixture.endpointId)).toBe(0);
      expect(await rows('select 1 from destinations where endpoint_id = $1', fixture.endpointId)).toBe(0);
    }
  }, 120_000);

  it(`deletes a destination mid-drain, ${ROUNDS} times, each answered 200, its past deliveries kept`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { fixture, destinations, stored } = await busyEndpoint();

      const deleted = await api(
        sut.url,
        'DELETE',
        `/api/endpoints/${fixture.endpointId}/destinations/${destinations[0]}`,
        { token: fixture.user.accessToken },
      );

      expect(deleted.status).toBe(200);
      expect(await rows('select 1 from destinations where id = $1', destinations[0])).toBe(0);
      expect(await rows('select 1 from deliveries where destination_id = $1', destinations[0])).toBe(0);
      expect(
        await rows(
          `select 1 from deliveries d join events e on e.id = d.event_id
           where e.endpoint_id = $1 and d.destination_id is null and d.destination_url like '%/a'`,
          fixture.endpointId,
        ),
      ).toBe(stored);
    }
  }, 120_000);
});
