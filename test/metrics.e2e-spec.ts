import { api } from './support/api-client';
import { startTestApp, type TestApp } from './support/test-app';

describe('metrics', () => {
  let sut: TestApp;
  beforeAll(async () => {
    sut = await startTestApp();
  });
  afterAll(() => sut.close());

  it('serves the Prometheus text format without a token', async () => {
    const response = await fetch(`${sut.url}/metrics`);
    const text = await response.text();

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const name of [
      'hooktrail_captures_total',
      'hooktrail_delivery_attempts_total',
      'hooktrail_delivery_attempt_duration_seconds',
      'hooktrail_delivery_queue_jobs',
      'hooktrail_delivery_queue_oldest_waiting_seconds',
      'nodejs_eventloop_lag_seconds',
      'process_resident_memory_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('hooktrail_captures_total{outcome="stored"}');
    expect(text).toMatch(/^hooktrail_delivery_queue_jobs\{state="waiting"\} \d+$/m);
  });

  it('is documented in the OpenAPI document as plain text', async () => {
    const response = await api(sut.url, 'GET', '/docs-json');
    const operation = response.body.paths['/metrics'].get;

    expect(operation.summary).toMatch(/Prometheus/);
    expect(Object.keys(operation.responses['200'].content)[0]).toMatch(/^text\/plain/);
  });
});
