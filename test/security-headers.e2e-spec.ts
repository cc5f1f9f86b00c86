import { closeAll } from './support/browser';
import { startTestApp, type TestApp } from './support/test-app';

/**
 * The browser headers of Fastify's routes: `upgrade-insecure-requests` and Strict-Transport-Security only
 * for a request that came over HTTPS, which over plain HTTP means X-Forwarded-Proto from a proxy the service
 * trusts (TRUST_PROXY); the other headers always; none on the capture URL, which is answered before Fastify.
 */

/** The dashboard, Swagger UI, a JSON route and an unknown one (answered by the error handler). */
const PATHS = ['/', '/docs', '/health', '/api/no-such-route'];
/** A few of the headers helmet sends whatever the protocol. */
const COMMON = { 'x-content-type-options': 'nosniff', 'x-frame-options': 'SAMEORIGIN' };

async function headersOf(sut: TestApp, path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${sut.url}${path}`, { headers, redirect: 'manual' });
  await response.arrayBuffer();
  return response.headers;
}

function expectPlainHttp(headers: Headers): void {
  expect(headers.get('content-security-policy')).toContain("default-src 'self'");
  expect(headers.get('content-security-policy')).not.toContain('upgrade-insecure-requests');
  expect(headers.get('strict-transport-security')).toBeNull();
  for (const [name, value] of Object.entries(COMMON)) expect(headers.get(name)).toBe(value);
}

function expectHttps(headers: Headers): void {
  expect(headers.get('content-security-policy')).toContain("default-src 'self'");
  expect(headers.get('content-security-policy')?.split(';')).toContain('upgrade-insecure-requests');
  expect(headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
  for (const [name, value] of Object.entries(COMMON)) expect(headers.get(name)).toBe(value);
}

describe('security headers', () => {
  let direct: TestApp | undefined;
  let behindProxy: TestApp | undefined;

  beforeAll(async () => {
    direct = await startTestApp({ TRUST_PROXY: '0' });
    behindProxy = await startTestApp({ TRUST_PROXY: '1' });
  });

  afterAll(() => closeAll([() => direct?.close(), () => behindProxy?.close()]));

  it.each(PATHS)('over plain HTTP, %s has no upgrade-insecure-requests and no HSTS', async (path) => {
    expectPlainHttp(await headersOf(direct!, path));
    expectPlainHttp(await headersOf(behindProxy!, path));
  });

  it.each(PATHS)(
    'with TRUST_PROXY=1, %s from a proxy saying X-Forwarded-Proto: https has both',
    async (path) => {
      expectHttps(await headersOf(behindProxy!, path, { 'x-forwarded-proto': 'https' }));
    },
  );

  it.each(PATHS)(
    'with TRUST_PROXY=0, %s with X-Forwarded-Proto: https has neither (a client says it)',
    async (path) => {
      expectPlainHttp(await headersOf(direct!, path, { 'x-forwarded-proto': 'https' }));
    },
  );

  it("believes the proxy's own entry, not one a client put before it", async () => {
    expectPlainHttp(await headersOf(behindProxy!, '/', { 'x-forwarded-proto': 'https, http' }));
  });

  it('sends none of the browser headers on the capture URL, even for HTTPS behind a trusted proxy', async () => {
    const response = await fetch(`${behindProxy!.url}/in/no-such-token`, {
      method: 'POST',
      headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/json' },
      body: '{}',
    });
    // The capture edge's answer, not Fastify's 404.
    expect(await response.json()).toMatchObject({
      statusCode: 404,
      message: 'no endpoint has this capture URL',
    });
    for (const name of ['content-security-policy', 'strict-transport-security', ...Object.keys(COMMON)])
      expect(response.headers.get(name)).toBeNull();
  });
});
