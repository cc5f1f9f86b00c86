import { Client } from 'pg';
import { api } from './support/api-client';
import { answer, HttpsDestination } from './support/https-destination';
import { routeQueued } from './support/knex-sql';
import { startServiceProcess } from './support/service-process';
import { startTestApp, type TestApp } from './support/test-app';
import { addDestination, capture, createEndpoint, hasStatus, waitForEvent } from './support/webhook-fixtures';

/** The value of one series of the exposition, e.g. `hooktrail_captures_total{outcome="stored"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function scrape(baseUrl: string): Promise<string> {
  return (await fetch(`${baseUrl}/metrics`)).text();
}

describe('metrics', () => {
  let sut: TestApp;
  let destination: HttpsDestination;
  beforeAll(async () => {
    sut = await startTestApp(
      { DELIVERY_RETRY_DELAYS_MS: '60000,60000,60000,60000' },
      { processMetrics: true },
    );
    destination = await HttpsDestination.start(answer(200, 'ok'));
  });
  afterAll(async () => {
    await sut.close();
    await destination.close();
  });

  it('serves the Prometheus text format without a token', async () => {
    const response = await fetch(`${sut.url}/metrics`);
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      'hooktrail_captures_total',
      'hooktrail_capture_duration_seconds',
      'hooktrail_capture_queue',
      'hooktrail_delivery_attempts_total',
      'hooktrail_delivery_attempt_duration_seconds',
      'hooktrail_delivery_attempts_in_flight',
      'hooktrail_delivery_queue_jobs',
      'hooktrail_delivery_queue_oldest_waiting_seconds',
      'hooktrail_routing_queue_events',
      'nodejs_eventloop_lag_seconds',
      'process_resident_memory_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toMatch(/^hooktrail_delivery_queue_jobs\{state="waiting"\} \d+$/m);
  });

  it('counts captures by outcome and delivery attempts with their duration', async () => {
    const fixture = await createEndpoint(sut.url);
    await addDestination(sut.url, fixture, `${destination.url}/hooks`);
    const before = await scrape(sut.url);

    const eventId = await capture(fixture);
    await waitForEvent(sut.url, fixture, eventId, hasStatus('delivered'));
    await fetch(`${sut.url}/in/no-such-token`, { method: 'POST', body: '{}' });
    const after = await scrape(sut.url);

    const delta = (series: string) => (sample(after, series) ?? 0) - (sample(before, series) ?? 0);
    expect(delta('hooktrail_captures_total{outcome="stored"}')).toBe(1);
    expect(delta('hooktrail_captures_total{outcome="not_found"}')).toBe(1);
    expect(delta('hooktrail_delivery_attempts_total{outcome="delivered"}')).toBe(1);
    expect(delta('hooktrail_delivery_attempt_duration_seconds_count{outcome="delivered"}')).toBe(1);
  });

  it('counts the captured events no router has made deliveries for yet (no worker running)', async () => {
    const apiOnly = await startTestApp({ APP_ROLE: 'api' });
    const db = new Client({ connectionString: apiOnly.env.DATABASE_URL });
    await db.connect();
    try {
      const fixture = await createEndpoint(apiOnly.url);
      await addDestination(apiOnly.url, fixture, `${destination.url}/hooks`);
      const before = sample(await scrape(apiOnly.url), 'hooktrail_routing_queue_events');
      await capture(fixture);
      await capture(fixture);
      const waiting = sample(await scrape(apiOnly.url), 'hooktrail_routing_queue_events');
      await routeQueued(db);
      const routed = sample(await scrape(apiOnly.url), 'hooktrail_routing_queue_events');

      expect([before, waiting, routed]).toEqual([0, 2, 0]);
    } finally {
      await db.end();
      await apiOnly.close();
    }
  });

  it('in a process of its own (APP_ROLE=all, deliveries on their own thread) sums the thread’s figures in', async () => {
    const service = await startServiceProcess();
    try {
      const fixture = await createEndpoint(service.url);
      await addDestination(service.url, fixture, `${destination.url}/hooks`);
      const eventIds = [await capture(fixture), await capture(fixture)];
      for (const eventId of eventIds)
        await waitForEvent(service.url, fixture, eventId, hasStatus('delivered'));
      const text = await scrape(service.url);

      expect(sample(text, 'hooktrail_captures_total{outcome="stored"}')).toBe(2);
      expect(sample(text, 'hooktrail_capture_duration_seconds_count{outcome="stored"}')).toBe(2);
      expect(sample(text, 'hooktrail_delivery_attempts_total{outcome="delivered"}')).toBe(2);
      expect(sample(text, 'hooktrail_delivery_attempt_duration_seconds_count{outcome="delivered"}')).toBe(2);
      // The thread's open requests: none, once both deliveries were recorded.
      expect(sample(text, 'hooktrail_delivery_attempts_in_flight')).toBe(0);
      // Node's own figures are the process's, counted once.
      expect(text.match(/^process_resident_memory_bytes /gm)).toHaveLength(1);
    } finally {
      await service.close();
    }
  }, 60_000);

  it("hosted inside another program (as these tests host it), leaves Node's own figures to that program", async () => {
    const hosted = await startTestApp();
    try {
      const text = await scrape(hosted.url);

      expect(text).toContain('# TYPE hooktrail_captures_total ');
      expect(text).not.toMatch(/^# TYPE (nodejs|process)_/m);
    } finally {
      await hosted.close();
    }
  });

  it('is documented in the OpenAPI document as plain text', async () => {
    const response = await api(sut.url, 'GET', '/docs-json');
    const operation = response.body.paths['/metrics'].get;

    expect(operation.summary).toMatch(/Prometheus/);
    expect(Object.keys(operation.responses['200'].content)[0]).toMatch(/^text\/plain/);
  });
});
