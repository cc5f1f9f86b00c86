import type { Browser } from 'playwright-core';
import { api, registerUser } from './support/api-client';
import { CHROMIUM_PATH, closeAll, launchChromium, watchPage } from './support/browser';
import { createNetworkNamespace, type NetworkNamespace } from './support/network-namespace';
import { startServiceProcess, type ServiceUnderTest } from './support/service-process';
import { startTestApp, type TestApp } from './support/test-app';

/** What a browser is told to upgrade to https, and to remember as https-only: for HTTPS requests only. */
function httpsOnlyHeaders(headers: Headers): { upgrade: boolean; hsts: boolean } {
  return {
    upgrade: (headers.get('content-security-policy') ?? '').includes('upgrade-insecure-requests'),
    hsts: headers.has('strict-transport-security'),
  };
}

/**
 * The service as `npm start` runs it (listening on every address, TRUST_PROXY unset), opened by Chromium on
 * another host over plain HTTP: a network namespace that reaches this machine at a non-loopback address.
 * Browsers never upgrade requests to localhost, so only such an address shows what a LAN box, a VM or a
 * remote `docker compose` showed: a blank page, its scripts asked for over https.
 */
describe('dashboard and Swagger UI over plain HTTP from another host', () => {
  let service: ServiceUnderTest | undefined;
  let namespace: NetworkNamespace | undefined;
  let browser: Browser | undefined;
  let baseUrl = '';

  beforeAll(async () => {
    service = await startServiceProcess();
    namespace = await createNetworkNamespace();
    browser = await launchChromium(await namespace.wrap(CHROMIUM_PATH));
    baseUrl = `http://${namespace.hostAddress}:${service.process.port}`;
  });

  afterAll(async () => {
    await closeAll([() => browser?.close(), () => namespace?.remove(), () => service?.close()]);
  });

  it('shows the login form, with every script and stylesheet loaded over http', async () => {
    const page = await browser!.newPage();
    const watch = watchPage(page);
    const insecure: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith(`${baseUrl}/`)) insecure.push(request.url());
    });
    const answer = await page.goto(`${baseUrl}/`);
    const submit = page.locator('[data-testid="submit-auth"]');
    await submit.waitFor({ timeout: 15_000 });
    expect(await submit.textContent()).toBe('Log in');
    expect(httpsOnlyHeaders(new Headers(await answer!.allHeaders()))).toEqual({
      upgrade: false,
      hsts: false,
    });
    expect(insecure).toEqual([]);
    expect(watch.errors).toEqual([]);
    await page.close();
  });

  it('shows Swagger UI at /docs', async () => {
    const page = await browser!.newPage();
    await page.goto(`${baseUrl}/docs`);
    await page.locator('.swagger-ui .info .title').waitFor({ timeout: 15_000 });
    expect(await page.locator('.swagger-ui .info .title').textContent()).toContain('Hooktrail API');
    expect(await page.locator('.opblock').count()).toBeGreaterThan(10);
    await page.close();
  });

  it('sends no https-only header behind an untrusted proxy (TRUST_PROXY unset)', async () => {
    const response = await api(service!.url, 'GET', '/health/ready', {
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(httpsOnlyHeaders(response.headers)).toEqual({ upgrade: false, hsts: false });
  });
});

describe('security headers behind a trusted proxy (TRUST_PROXY=1)', () => {
  let sut: TestApp;

  beforeAll(async () => {
    sut = await startTestApp({ TRUST_PROXY: '1' });
  });

  afterAll(async () => {
    await sut?.close();
  });

  it('sends upgrade-insecure-requests and HSTS when the proxy says the request came over https', async () => {
    const overHttps = await api(sut.url, 'GET', '/', { headers: { 'x-forwarded-proto': 'https' } });
    expect(httpsOnlyHeaders(overHttps.headers)).toEqual({ upgrade: true, hsts: true });
    expect(overHttps.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');

    const overHttp = await api(sut.url, 'GET', '/', { headers: { 'x-forwarded-proto': 'http' } });
    expect(httpsOnlyHeaders(overHttp.headers)).toEqual({ upgrade: false, hsts: false });
    // Everything else helmet sends is the same either way.
    for (const name of ['x-content-type-options', 'x-frame-options', 'referrer-policy']) {
      expect(overHttp.headers.get(name)).toBe(overHttps.headers.get(name));
      expect(overHttp.headers.get(name)).toBeTruthy();
    }
  });

  it('sends no browser headers on a capture', async () => {
    const user = await registerUser(sut.url);
    const created = await api(sut.url, 'POST', '/api/endpoints', {
      token: user.accessToken,
      body: { name: 'headers' },
    });
    const capture = await api(sut.url, 'POST', `/in/${created.body.endpoint.public_token}`, {
      body: { ok: true },
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(capture.status).toBe(200);
    expect(capture.headers.has('content-security-policy')).toBe(false);
    expect(capture.headers.has('strict-transport-security')).toBe(false);
  });
});
