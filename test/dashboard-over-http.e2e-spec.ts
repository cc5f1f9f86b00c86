import type { Browser } from 'playwright-core';
import { CHROMIUM_PATH, closeAll, launchChromium, watchPage } from './support/browser';
import { createNetworkNamespace, type NetworkNamespace } from './support/network-namespace';
import { startServiceProcess, type ServiceUnderTest } from './support/service-process';

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
 * remote `docker compose` showed: a blank page, its scripts asked for over https. The headers themselves, by
 * protocol and proxy, are in security-headers.e2e-spec.ts.
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
});
