import { api } from './support/api-client';
import { startTestApp, type TestApp } from './support/test-app';

describe('health', () => {
  let sut: TestApp;
  beforeAll(async () => {
    sut = await startTestApp();
  });
  afterAll(() => sut.close());

  it('answers liveness without a token', async () => {
    const response = await api(sut.url, 'GET', '/health');
    expect(response).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('reports PostgreSQL and Redis as up when both answer', async () => {
    const response = await api(sut.url, 'GET', '/health/ready');
    expect(response.status).toBe(200);
    expect(response.body.details).toEqual({ postgres: { status: 'up' }, redis: { status: 'up' } });
  });

  it('answers unknown routes with a JSON 404', async () => {
    const response = await api(sut.url, 'GET', '/no/such/route');
    expect(response).toMatchObject({ status: 404, body: { statusCode: 404, error: 'Not Found' } });
  });
});
