import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import {
  closeAll,
  horizontalOverflow,
  launchChromium,
  type PageWatch,
  reloadMarker,
  screenshot,
  setReloadMarker,
  storySteps,
  watchPage,
} from './support/browser';
import { api } from './support/api-client';
import { answer, HttpsDestination } from './support/https-destination';
import { startTestApp, type TestApp } from './support/test-app';

/**
 * The dashboard in real headless Chromium, driven like a user: sign up, create an endpoint, watch a
 * webhook sent from outside appear live, read it, add a destination, replay, (de)activate, check Stripe
 * signatures and filter a destination on a second endpoint, create and revoke an API key, follow and
 * acknowledge the issue a failing destination opens, read the statistics charts, add, test and delete a
 * notification channel, log out. The steps share one browser page and run in order; once a step fails,
 * the later ones fail at once naming it. It also takes the README's screenshots, which `npm run screenshots`
 * writes: docs/events-list.png, docs/event-detail.png, docs/dashboard-issues.png and docs/dashboard-stats.png.
 */

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** A new event must show up in the list within this, without a reload (the spec says "within a second"). */
const LIVE_TIMEOUT_MS = 5000;
const CUSTOM_HEADER = 'x-acme-signature';
const CUSTOM_HEADER_VALUE =
  't=1718000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd';

const STRIPE_SECRET = 'whsec_dashboard_signing_7f3a';
/** A Stripe event, and the same with its amount changed after Stripe signed it. */
const SIGNED_BODY = JSON.stringify({ id: 'evt_5SignedDemo', type: 'invoice.paid', amount: 100 });
const TAMPERED_BODY = SIGNED_BODY.replace('100', '999');
const CUSTOMERS_ONLY = { body: { type: { $startsWith: 'customer.' } } };
const API_KEY_NAME = 'CI deploy checks';
const DAY_MS = 86_400_000;

const PAYLOADS = {
  paid: {
    id: 'evt_1PaidDemo',
    type: 'invoice.paid',
    data: { object: { id: 'in_1Demo', amount_paid: 4200, currency: 'eur', customer: 'cus_Demo' } },
  },
  customer: { id: 'evt_2CustomerDemo', type: 'customer.created', data: { object: { id: 'cus_Demo' } } },
  refund: {
    id: 'evt_3RefundDemo',
    type: 'charge.refunded',
    data: { object: { id: 'ch_Demo', amount: 1500 } },
  },
  renewal: { id: 'evt_4RenewalDemo', type: 'subscription.renewed', data: { object: { id: 'sub_Demo' } } },
};

describe('dashboard in headless Chromium', () => {
  let sut: TestApp | undefined;
  let sink: HttpsDestination | undefined;
  /** Where the notification channel made on the notifications page sends its messages. */
  let channelSink: HttpsDestination | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let watch: PageWatch;

  /** What the steps learn and hand on. */
  const flow = {
    endpointId: '',
    capturePath: '',
    captureUrlShown: '',
    paidId: '',
    customerId: '',
    refundId: '',
  };
  /** The second endpoint, made through the API, whose captures are checked for Stripe's signature. */
  const signed = { endpointId: '', capturePath: '', destinationId: '' };
  /** The API key made on the API keys page: the key itself is read from the page, the once it is shown. */
  const apiKey = { id: '', key: '', prefix: '' };

  beforeAll(async () => {
    if (!process.env.NODE_EXTRA_CA_CERTS) {
      throw new Error(
        'Run with NODE_EXTRA_CA_CERTS=test/.certs/ca.pem (after `node test/support/make-test-certs.js`): ' +
          'the delivery to the HTTPS test destination needs the test CA.',
      );
    }
    browser = await launchChromium();
    // Retries far in the future: a failed delivery stays "failed" for the screenshot.
    sut = await startTestApp({ DELIVERY_RETRY_DELAYS_MS: '600000,600000,600000,600000' });
    const index = await fetch(`${sut.url}/`);
    if (index.status !== 200 || !(index.headers.get('content-type') ?? '').includes('text/html')) {
      throw new Error(
        `GET / answered ${index.status}: no dashboard build in dist/web; run \`npm run build:web\` first.`,
      );
    }
    sink = await HttpsDestination.start(
      answer(200, '{"received":true}', { 'content-type': 'application/json' }),
    );
    channelSink = await HttpsDestination.start(answer(204, ''));
    context = await browser.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, locale: 'en-GB' });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    watch = watchPage(page);
  });

  afterAll(async () => {
    // Every close runs even when an earlier one throws; the browser goes first so no stream holds the server.
    const closers = [
      () => context?.close(),
      () => browser?.close(),
      () => sut?.close(),
      () => sink?.close(),
      () => channelSink?.close(),
    ];
    await closeAll(closers);
  });

  /** Adds what the page said (uncaught errors, console errors, where it was) to a failure. */
  const withPageDiagnostics = (error: unknown): unknown => {
    if (!(error instanceof Error) || !page) return error;
    const notes = [`page URL: ${page.url()}`];
    if (watch.errors.length > 0) notes.push(`page errors:\n  ${watch.errors.join('\n  ')}`);
    if (watch.consoleErrors.length > 0) notes.push(`console errors:\n  ${watch.consoleErrors.join('\n  ')}`);
    error.message += `\n\n${notes.join('\n')}`;
    const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
    error.stack = [`${error.name}: ${error.message}`, ...frames].join('\n');
    return error;
  };
  const step = storySteps(withPageDiagnostics);

  const byTestId = (testId: string, scope: Page | Locator = page) =>
    scope.locator(`[data-testid="${testId}"]`);
  const eventRow = (eventId: string) => page.locator(`[data-testid="event-row"][data-event-id="${eventId}"]`);
  const rowWithStatus = (eventId: string, status: string) =>
    eventRow(eventId).locator(`[data-testid="event-status"][data-status="${status}"]`);

  /** Sends a webhook to the capture URL from outside the browser, the way curl would. */
  async function sendWebhook(payload: unknown): Promise<{ status: number; id?: string }> {
    const response = await fetch(`${sut!.url}${flow.capturePath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CUSTOM_HEADER]: CUSTOM_HEADER_VALUE },
      body: JSON.stringify(payload),
    });
    const body = (await response.json()) as { id?: string };
    return { status: response.status, id: body.id };
  }

  async function capture(payload: unknown): Promise<string> {
    const { status, id } = await sendWebhook(payload);
    expect(status).toBe(200);
    expect(id).toEqual(expect.any(String));
    return id!;
  }

  /** The page's access token, for calls to the API beside the page. */
  const accessToken = async () =>
    String(await page.evaluate('localStorage.getItem("hooktrail.accessToken")'));

  /** Sends `body` to the signed endpoint with the Stripe signature of SIGNED_BODY; returns the event id. */
  async function captureSigned(body: string): Promise<string> {
    const response = await fetch(`${sut!.url}${signed.capturePath}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({
          payload: SIGNED_BODY,
          secret: STRIPE_SECRET,
        }),
      },
      body,
    });
    const answer = (await response.json()) as { id?: string };
    expect(response.status).toBe(200);
    expect(answer.id).toEqual(expect.any(String));
    return answer.id!;
  }

  /** The page was not reloaded since setReloadMarker: the marker is still on `window`, no load event fired. */
  async function expectNoReload(loadsBefore: number): Promise<void> {
    expect(await reloadMarker(page)).toBe(1);
    expect(watch.loads()).toBe(loadsBefore);
  }

  async function openEndpointPage(): Promise<void> {
    await page.locator('nav.breadcrumbs a', { hasText: 'Stripe production' }).click();
    await byTestId('events-list').waitFor({ state: 'attached' });
    await page.locator('[data-testid="live-status"][data-state="open"]').first().waitFor();
  }

  async function openApiKeysPage(): Promise<void> {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL((url) => url.hash === '#/api-keys');
    await page.locator('[data-testid="api-keys-list"], [data-testid="api-keys-empty"]').waitFor();
  }

  /** GET /api/endpoints with the API key: its status. */
  const endpointsWithKey = async () =>
    (await api(sut!.url, 'GET', '/api/endpoints', { token: apiKey.key })).status;

  /** The key's last_used_at as the API lists it, once recorded (it is written beside the request). */
  async function keyLastUsedAt(): Promise<string> {
    const token = await accessToken();
    for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
      const { body } = await api(sut!.url, 'GET', '/api/api-keys', { token });
      const usedAt = body.api_keys.find((key: { id: string }) => key.id === apiKey.id)?.last_used_at;
      if (usedAt) return usedAt;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the API key's use was not recorded within 5 s");
  }

  async function openEvent(eventId: string): Promise<void> {
    await eventRow(eventId).locator('a').click();
    await page.locator(`[data-testid="event-detail"][data-event-id="${eventId}"]`).waitFor();
  }

  step('signs up (toggling the auth screen to sign-up mode)', async () => {
    await page.goto(`${sut!.url}/`);
    const submit = byTestId('submit-auth');
    await submit.waitFor();
    expect(await submit.textContent()).toBe('Log in');
    expect(await byTestId('name').count()).toBe(0);

    await byTestId('toggle-auth-mode').click();
    await byTestId('name').fill('Ada Lovelace');
    await byTestId('email').fill(`ada-${Date.now().toString(36)}@example.com`);
    await byTestId('password').fill('correct horse battery staple');
    expect(await submit.textContent()).toBe('Sign up');
    await submit.click();

    await byTestId('logout').waitFor();
    await byTestId('new-endpoint-name').waitFor();
    expect(await byTestId('user-plan').textContent()).toBe('free');
    await setReloadMarker(page, 1);
  });

  step('creates an endpoint; its empty events list teaches the capture URL and a curl command', async () => {
    await byTestId('endpoints-empty').waitFor();
    await byTestId('new-endpoint-name').fill('Stripe production');
    await byTestId('create-endpoint').click();

    const row = byTestId('endpoint-row');
    await row.waitFor();
    flow.endpointId = (await row.getAttribute('data-endpoint-id')) ?? '';
    expect(flow.endpointId).not.toBe('');
    const rowCaptureUrl = ((await byTestId('capture-url', row).textContent()) ?? '').trim();
    expect(rowCaptureUrl).toMatch(/^https?:\/\/[^/]+\/in\/[A-Za-z0-9_-]+$/);
    // The shown URL carries SITE_URL (http://localhost:3000 by default); the test app listens elsewhere.
    flow.captureUrlShown = rowCaptureUrl;
    flow.capturePath = new URL(rowCaptureUrl).pathname;

    await byTestId('endpoint-link', row).click();
    await page.waitForURL((url) => url.hash === `#/endpoints/${flow.endpointId}`);
    const empty = byTestId('events-empty');
    await empty.waitFor();
    expect((await byTestId('capture-url').textContent())?.trim()).toBe(flow.captureUrlShown);
    const curl = (await byTestId('curl-command', empty).textContent()) ?? '';
    expect(curl).toContain('curl -X POST');
    expect(curl).toContain(`'${flow.captureUrlShown}'`);
    expect(curl).toContain('content-type: application/json');
    expect(await empty.textContent()).toContain(flow.captureUrlShown);
    expect(await byTestId('event-row').count()).toBe(0);
  });

  step('shows a webhook sent to the capture URL in the list live, without a reload', async () => {
    // The stream is connected and the (empty) list loaded, so only the live stream can bring the event in.
    await page.locator('[data-testid="live-status"][data-state="open"]').waitFor();
    const loadsBefore = watch.loads();

    const sentAt = Date.now();
    flow.paidId = await capture(PAYLOADS.paid);
    await eventRow(flow.paidId).waitFor({ timeout: LIVE_TIMEOUT_MS });
    const shownAfterMs = Date.now() - sentAt;
    expect(shownAfterMs).toBeLessThan(LIVE_TIMEOUT_MS);

    await expectNoReload(loadsBefore);
    await byTestId('events-empty').waitFor({ state: 'detached' });
    expect(await rowWithStatus(flow.paidId, 'received').count()).toBe(1);
    expect(await eventRow(flow.paidId).textContent()).toContain('POST');

    // A second one lands on top, still live.
    flow.customerId = await capture(PAYLOADS.customer);
    await eventRow(flow.customerId).waitFor({ timeout: LIVE_TIMEOUT_MS });
    expect(await byTestId('event-row').first().getAttribute('data-event-id')).toBe(flow.customerId);
    expect(await byTestId('event-row').count()).toBe(2);
    await expectNoReload(loadsBefore);
  });

  step('opens the event: method, the custom header and the pretty-printed JSON body', async () => {
    const loadsBefore = watch.loads();
    await openEvent(flow.paidId);
    expect(page.url()).toContain(`#/endpoints/${flow.endpointId}/events/${flow.paidId}`);
    expect(await byTestId('event-method').textContent()).toBe('POST');
    expect((await byTestId('event-source-ip').textContent())?.trim()).toMatch(/127\.0\.0\.1|::1/);

    const header = byTestId('event-headers').locator('tr', { hasText: CUSTOM_HEADER });
    expect(await header.count()).toBe(1);
    expect(await header.locator('th').textContent()).toBe(CUSTOM_HEADER);
    expect(await header.locator('td').textContent()).toBe(CUSTOM_HEADER_VALUE);
    expect(await byTestId('event-headers').textContent()).toContain('application/json');

    expect(await byTestId('event-body').textContent()).toBe(JSON.stringify(PAYLOADS.paid, null, 2));
    await byTestId('deliveries-empty').waitFor();
    await expectNoReload(loadsBefore);
  });

  step('adds a destination on the endpoint page (secret masked)', async () => {
    await openEndpointPage();
    await byTestId('destination-url').fill(sink!.url);
    await byTestId('destination-secret').fill('whsec_dashboard_demo_secret');
    await byTestId('add-destination').click();

    const row = byTestId('destination-row');
    await row.waitFor();
    expect(await byTestId('destination-row-url', row).textContent()).toBe(sink!.url);
    expect(await byTestId('destination-secret-value', row).textContent()).toContain('••••••••');
    expect(await byTestId('destination-secret-value', row).textContent()).not.toContain('whsec_');
    const backlog = byTestId('destination-backlog', row);
    expect(await backlog.getAttribute('data-pending')).toBe('0');
    expect(await backlog.textContent()).toBe('Nothing waiting');
    expect(await byTestId('destination-url').inputValue()).toBe('');
  });

  step(
    'sets limits, FIFO order and pauses the destination: the row shows them, the API has them, resume clears the badge',
    async () => {
      const row = byTestId('destination-row');
      expect(await byTestId('destination-limits', row).textContent()).toContain(
        'Limits: no rate limit, a fair share at once',
      );
      await byTestId('edit-limits', row).click();
      await byTestId('rate-limit', row).fill('50');
      await byTestId('rate-limit-period', row).selectOption('minute');
      await byTestId('max-in-flight', row).fill('5');
      await byTestId('save-limits', row).click();
      await page
        .locator('[data-testid="destination-limits"]', { hasText: 'at most 50 per minute, 5 at once' })
        .waitFor();
      expect(await byTestId('destination-fifo', row).count()).toBe(0);
      await byTestId('edit-limits', row).click();
      await byTestId('ordering', row).selectOption('fifo');
      await byTestId('save-limits', row).click();
      await byTestId('destination-fifo', row).waitFor();
      expect(await byTestId('destination-limits', row).textContent()).toContain(
        'at most 50 per minute, one at a time, in order (FIFO)',
      );

      await byTestId('destination-pause-toggle', row).click();
      await page.locator('[data-testid="destination-row"][data-paused="true"]').waitFor();
      expect(await byTestId('destination-paused', row).textContent()).toContain('Paused');
      expect(await byTestId('destination-pause-toggle', row).textContent()).toBe('Resume');
      const destinationId = (await row.getAttribute('data-destination-id')) ?? '';
      const token = await accessToken();
      const stored = await api(
        sut!.url,
        'GET',
        `/api/endpoints/${flow.endpointId}/destinations/${destinationId}`,
        {
          token,
        },
      );
      expect(stored.body.destination).toMatchObject({
        rate_limit: 50,
        rate_limit_period: 'minute',
        max_in_flight: 5,
        paused: true,
        ordering: 'fifo',
      });

      // Back to the defaults, resumed, for the steps that follow.
      await byTestId('destination-pause-toggle', row).click();
      await page.locator('[data-testid="destination-row"][data-paused="false"]').waitFor();
      expect(await byTestId('destination-paused', row).count()).toBe(0);
      await byTestId('edit-limits', row).click();
      await byTestId('rate-limit', row).fill('');
      await byTestId('max-in-flight', row).fill('');
      await byTestId('ordering', row).selectOption('none');
      await byTestId('save-limits', row).click();
      await page
        .locator('[data-testid="destination-limits"]', { hasText: 'no rate limit, a fair share at once' })
        .waitFor();
    },
  );

  step('replays the event and shows the delivery attempt (200) without a reload', async () => {
    const loadsBefore = watch.loads();
    await openEvent(flow.paidId);
    await byTestId('deliveries-empty').waitFor();

    await byTestId('replay').click();
    await page.locator('[data-testid="replay-result"]', { hasText: 'Replay queued' }).waitFor();
    const delivery = page.locator('[data-testid="delivery-row"][data-status="delivered"]');
    await delivery.waitFor({ timeout: 15_000 });
    const attempts = byTestId('attempt-row', delivery);
    expect(await attempts.count()).toBe(1);
    expect(await attempts.first().textContent()).toContain('200');
    expect(await delivery.textContent()).toContain(sink!.url);
    await byTestId('event-detail')
      .locator('[data-testid="event-status"][data-status="delivered"]')
      .first()
      .waitFor();
    await expectNoReload(loadsBefore);

    // What the destination got is the captured request, byte for byte.
    const [forwarded] = await sink!.waitForRequests(1);
    expect(forwarded.body.toString('utf8')).toBe(JSON.stringify(PAYLOADS.paid));
    expect(forwarded.headers[CUSTOM_HEADER]).toBe(CUSTOM_HEADER_VALUE);

    await page.locator('[data-testid="live-status"][data-state="open"]').waitFor();
    await cardScreenshot('event-detail.png', '[data-testid="delivery-row"]', 'bottom');
  });

  step('updates a status badge in the list live as a delivery fails', async () => {
    await openEndpointPage();
    const loadsBefore = watch.loads();
    await rowWithStatus(flow.paidId, 'delivered').waitFor();
    await rowWithStatus(flow.customerId, 'received').waitFor();

    sink!.respondWith(
      answer(500, '{"error":"database unavailable"}', { 'content-type': 'application/json' }),
    );
    flow.refundId = await capture(PAYLOADS.refund);
    await eventRow(flow.refundId).waitFor({ timeout: LIVE_TIMEOUT_MS });
    await rowWithStatus(flow.refundId, 'failed').waitFor({ timeout: 15_000 });
    await expectNoReload(loadsBefore);
  });

  step(
    'the failure opens an issue: a red health dot, a count in the header, the issues page; acknowledges it',
    async () => {
      const loadsBefore = watch.loads();
      // Both follow the live stream's update of the failed event, without a reload.
      const dot = page.locator('[data-testid="destination-health"][data-level="failing"]');
      await dot.waitFor({ timeout: LIVE_TIMEOUT_MS });
      expect(await dot.getAttribute('aria-label')).toMatch(/^Failing: .*500/);
      const count = byTestId('open-issues-count');
      await count.filter({ hasText: /^1$/ }).waitFor({ timeout: LIVE_TIMEOUT_MS });
      const issuesLink = page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: /^Issues/ });
      expect(await issuesLink.getAttribute('aria-label')).toBe('Issues (1 open issue)');

      await issuesLink.click();
      await page.waitForURL((url) => url.hash === '#/issues');
      const issue = page.locator('[data-testid="issue-row"][data-status="open"]');
      await issue.waitFor();
      expect(await byTestId('issue-row').count()).toBe(1);
      const issueId = (await issue.getAttribute('data-issue-id')) ?? '';
      const token = await accessToken();
      const listed = await api(sut!.url, 'GET', '/api/issues?status=open', { token });
      expect(listed.body.issues).toEqual([
        expect.objectContaining({
          id: issueId,
          endpoint_id: flow.endpointId,
          kind: 'http_5xx',
          failure_count: 1,
          last_event_id: flow.refundId,
        }),
      ]);
      expect(await issue.getAttribute('data-kind')).toBe('http_5xx');
      expect(await byTestId('issue-kind', issue).textContent()).toBe('HTTP 5xx answers');
      expect(await byTestId('issue-summary', issue).textContent()).toBe(listed.body.issues[0].summary);
      expect(await byTestId('issue-destination', issue).textContent()).toBe(sink!.url);
      expect(await byTestId('issue-failure-count', issue).textContent()).toBe('1');
      expect(await byTestId('issue-event-link', issue).getAttribute('href')).toBe(
        `#/endpoints/${flow.endpointId}/events/${flow.refundId}`,
      );
      // The free plan gets no AI diagnosis: the row says where it comes with instead of offering it.
      expect(await byTestId('issue-diagnosis-upgrade', issue).textContent()).toContain('Starter plan');
      await cardScreenshot('dashboard-issues.png', '[data-testid="issues-list"]', 'top');

      const patched = page.waitForResponse(
        (response) =>
          response.request().method() === 'PATCH' && response.url().endsWith(`/api/issues/${issueId}`),
      );
      await issue.getByRole('button', { name: /^Acknowledge/ }).click();
      expect((await patched).status()).toBe(200);
      const stored = await api(sut!.url, 'GET', `/api/issues/${issueId}`, { token });
      expect(stored.body.issue).toMatchObject({ id: issueId, status: 'acknowledged', diagnosis: null });
      // No open issue is left: the list of open ones empties and the header's count goes away.
      await byTestId('issues-empty').waitFor();
      await count.waitFor({ state: 'detached' });

      // The status filter, kept in the hash: the acknowledged issue under its status, nothing to acknowledge.
      await page.getByLabel('Status').selectOption('acknowledged');
      const acknowledged = page.locator(
        `[data-testid="issue-row"][data-issue-id="${issueId}"][data-status="acknowledged"]`,
      );
      await acknowledged.waitFor();
      expect(await byTestId('acknowledge-issue', acknowledged).count()).toBe(0);
      await waitForHash('#/issues?status=acknowledged');
      await page.getByLabel('Endpoint').selectOption({ label: 'Stripe production' });
      await waitForHash(`#/issues?status=acknowledged&endpoint_id=${flow.endpointId}`);
      await acknowledged.waitFor();

      await acknowledged.getByRole('link', { name: 'Stripe production' }).click();
      await byTestId('events-list').waitFor({ state: 'attached' });
      await page.locator('[data-testid="live-status"][data-state="open"]').first().waitFor();
      await expectNoReload(loadsBefore);
    },
  );

  step('deactivates the endpoint (captures get 403) and reactivates it (200 again)', async () => {
    const toggle = page.locator('.page-head [data-testid="endpoint-active-toggle"]');
    expect(await toggle.isChecked()).toBe(true);

    const patched = (active: boolean) =>
      page.waitForResponse(
        (response) =>
          response.request().method() === 'PATCH' &&
          response.url().endsWith(`/api/endpoints/${flow.endpointId}`) &&
          response.request().postData()?.includes(`"is_active":${active}`) === true,
      );

    const deactivated = patched(false);
    await toggle.uncheck();
    expect((await deactivated).status()).toBe(200);
    expect(await toggle.isChecked()).toBe(false);
    await page.locator('.capture .alert-warning', { hasText: 'inactive' }).waitFor();
    const refused = await sendWebhook({ type: 'should.be.refused' });
    expect(refused.status).toBe(403);

    const reactivated = patched(true);
    await toggle.check();
    expect((await reactivated).status()).toBe(200);
    expect(await toggle.isChecked()).toBe(true);
    await page.locator('.capture .alert-warning').waitFor({ state: 'detached' });
    const accepted = await sendWebhook(PAYLOADS.renewal);
    expect(accepted.status).toBe(200);
    await rowWithStatus(accepted.id!, 'delivered').waitFor({ timeout: 15_000 });
    expect(await byTestId('event-row').count()).toBe(4);

    // The events list, for the README: delivered, failed and received events, live indicator on. Live
    // rows carry no body preview (the stream's messages have no body), so the list is loaded afresh.
    await page.locator('nav.breadcrumbs a', { hasText: /^Endpoints$/ }).click();
    await byTestId('endpoint-link').click();
    await byTestId('event-row').nth(3).waitFor();
    await page.locator('[data-testid="live-status"][data-state="open"]').waitFor();
    expect(await eventRow(flow.paidId).textContent()).toContain('invoice.paid');
    await cardScreenshot('events-list.png', '[data-testid="events-list"]', 'top');
  });

  step(
    "draws the statistics: events per hour stacked by status, the destination's success rate and latency",
    async () => {
      const loadsBefore = watch.loads();
      const card = byTestId('endpoint-stats');
      // paid and renewal delivered, the refund failed, the customer event came before any destination.
      const expected = '4 events, 1 received, 2 delivered, 1 failed, 0 dead letter.';
      await byTestId('stats-summary', card)
        .filter({ hasText: `Last 24 hours: ${expected}` })
        .waitFor();
      const { body: stats } = await api(
        sut!.url,
        'GET',
        `/api/endpoints/${flow.endpointId}/stats?window=24h`,
        {
          token: await accessToken(),
        },
      );
      const sum = (status: string) =>
        stats.buckets.reduce((total: number, bucket: Record<string, number>) => total + bucket[status], 0);
      expect([sum('received'), sum('delivered'), sum('failed'), sum('dead_letter')]).toEqual([1, 2, 1, 0]);

      // The chart is a canvas with the bars drawn in the statuses' colours.
      const drawn = await chartPixels();
      expect(drawn.width).toBeGreaterThan(300);
      expect(drawn.height).toBeGreaterThan(100);
      expect(drawn.received).toBeGreaterThan(0);
      expect(drawn.delivered).toBeGreaterThan(0);
      expect(drawn.failed).toBeGreaterThan(0);
      // Delivered (2) stands twice as tall as received (1) in the same stack.
      expect(drawn.delivered / drawn.received).toBeGreaterThan(1.5);

      // Three attempts: the replayed invoice and the renewal succeeded, the refund got a 500.
      const row = byTestId('stats-destination-row', card);
      expect(await row.count()).toBe(1);
      expect(await byTestId('stats-attempts', row).textContent()).toBe('3');
      expect(await byTestId('stats-success-rate', row).textContent()).toBe('66.7 %');
      expect(stats.destinations[0]).toMatchObject({ url: sink!.url, attempts: 3 });
      expect(stats.destinations[0].success_rate).toBeCloseTo(2 / 3);
      // The renewal's delivery resolved the issue: the dot says some attempts failed, no longer red.
      const dot = page.locator('[data-testid="destination-health"][data-level="degraded"]');
      await dot.waitFor();
      expect(await dot.getAttribute('title')).toBe(
        'Some attempts failed: 66.7 % of 3 succeeded in the last hour',
      );

      await byTestId('stats-window-1h', card).click();
      await byTestId('stats-summary', card)
        .filter({ hasText: `Last hour: ${expected}` })
        .waitFor();
      expect(await byTestId('stats-window-1h', card).getAttribute('aria-pressed')).toBe('true');
      expect((await chartPixels()).delivered).toBeGreaterThan(0);
      await byTestId('stats-window-24h', card).click();
      await byTestId('stats-summary', card).filter({ hasText: 'Last 24 hours' }).waitFor();
      await cardScreenshot('dashboard-stats.png', '[data-testid="stats-events-chart"]', 'top');
      await expectNoReload(loadsBefore);
    },
  );

  step('replays every event the filters match in bulk: a dry-run count, then its progress', async () => {
    const loadsBefore = watch.loads();
    await byTestId('filter-q').fill('invoice.paid');
    const start = page.locator('[data-testid="bulk-replay-start"][data-count="1"]');
    await start.waitFor();
    expect(await start.textContent()).toBe('Replay all 1 matching');
    const before = sink!.received.length;
    // The first read of its progress fails (a network blip): the bar reads it again, and does not freeze.
    const progressRead = /\/bulk-replays\/[0-9a-f-]{36}$/;
    let reads = 0;
    await page.route(progressRead, (route) => (reads++ === 0 ? route.abort('failed') : route.continue()));
    const errorsBefore = watch.consoleErrors.length;
    await start.click();
    const finished = page.locator('[data-testid="bulk-replay-progress"][data-status="completed"]');
    await finished.waitFor({ timeout: 15_000 });
    await page.unroute(progressRead);
    expect(await finished.textContent()).toContain('Replayed 1 event');
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(watch.consoleErrors.splice(errorsBefore)).toEqual(['Failed to load resource: net::ERR_FAILED']);
    // The destination gets the paid invoice once more (a retry of the failed refund may arrive too).
    const replayedPaid = () =>
      sink!.received
        .slice(before)
        .some((request) => JSON.parse(request.body.toString('utf8')).id === PAYLOADS.paid.id);
    while (!replayedPaid()) await sink!.waitForRequests(sink!.received.length + 1);
    await byTestId('clear-filters').click();
    await page.locator('[data-testid="bulk-replay-start"][data-count="4"]').waitFor();
    await expectNoReload(loadsBefore);
  });

  step(
    'under a status filter, the count to replay follows live status changes; the breadcrumb keeps the filters',
    async () => {
      const loadsBefore = watch.loads();
      const token = await accessToken();
      const eventPath = (eventId: string) => `/api/endpoints/${flow.endpointId}/events/${eventId}`;
      const deliveredCount = async () =>
        (
          await api(sut!.url, 'POST', `/api/endpoints/${flow.endpointId}/bulk-replays`, {
            token,
            body: { status: 'delivered', dry_run: true },
          })
        ).body.count as number;
      // The refund's retries may deliver it meanwhile: the button is compared with the API until they agree.
      const buttonAgreesWithApi = async (): Promise<number> => {
        for (const deadline = Date.now() + 10_000; ;) {
          const expected = await deliveredCount();
          const shown = page.locator(`[data-testid="bulk-replay-start"][data-count="${expected}"]`);
          try {
            await shown.waitFor({ timeout: 2000 });
            return expected;
          } catch (error) {
            if (Date.now() > deadline) throw error;
          }
        }
      };
      await byTestId('filter-status').selectOption('delivered');
      await waitForHash(`#/endpoints/${flow.endpointId}?status=delivered`);
      const before = await buttonAgreesWithApi();

      // Captured as received (not listed under this filter), then delivered: no new row, a new count.
      const renewal = await capture(PAYLOADS.renewal);
      for (const deadline = Date.now() + 15_000; ;) {
        const { body } = await api(sut!.url, 'GET', eventPath(renewal), { token });
        if (body.event.status === 'delivered') break;
        if (Date.now() > deadline) throw new Error('the renewal was not delivered within 15 s');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await buttonAgreesWithApi()).toBeGreaterThan(before);

      // An event opened from the filtered list links back to the list as it was left.
      await openEvent(flow.paidId);
      await page.locator('nav.breadcrumbs a', { hasText: 'Stripe production' }).click();
      await waitForHash(`#/endpoints/${flow.endpointId}?status=delivered`);
      expect(await byTestId('filter-status').inputValue()).toBe('delivered');
      await eventRow(flow.paidId).waitFor();
      await byTestId('clear-filters').click();
      await waitForHash(`#/endpoints/${flow.endpointId}`);
      await expectNoReload(loadsBefore);
    },
  );

  step('fits a 390-pixel-wide phone screen without horizontal scrolling', async () => {
    await page.setViewportSize(PHONE);
    try {
      const endpointPage = await horizontalOverflow(page);
      expect(endpointPage.scrollWidth).toBeLessThanOrEqual(endpointPage.innerWidth);
      expect(endpointPage.innerWidth).toBe(PHONE.width);

      await openEvent(flow.paidId);
      await page.locator('[data-testid="delivery-row"][data-status="delivered"]').first().waitFor();
      const eventPage = await horizontalOverflow(page);
      expect(eventPage.scrollWidth).toBeLessThanOrEqual(eventPage.innerWidth);

      await page.locator('nav.breadcrumbs a', { hasText: /^Endpoints$/ }).click();
      await byTestId('endpoint-row').waitFor();
      const endpointsPage = await horizontalOverflow(page);
      expect(endpointsPage.scrollWidth).toBeLessThanOrEqual(endpointsPage.innerWidth);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  step('pages a search past the 1,000 matches it counts, to the last page', async () => {
    const token = await accessToken();
    const created = await api(sut!.url, 'POST', '/api/endpoints', { token, body: { name: 'Archive' } });
    expect(created.status).toBe(201);
    const archive = created.body.endpoint;
    const capturePath = new URL(archive.capture_url).pathname;
    const statuses: number[] = [];
    for (let sent = 0; sent < 1001; sent += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, 1001 - sent) }, async () => {
          const response = await fetch(`${sut!.url}${capturePath}`, {
            method: 'POST',
            body: 'archive.entry',
          });
          await response.arrayBuffer();
          statuses.push(response.status);
        }),
      );
    expect(new Set(statuses)).toEqual(new Set([200]));
    const loadsBefore = watch.loads();
    await page.evaluate(
      `window.location.hash = '/endpoints/${archive.id}?q=archive.entry&limit=100&page=10'`,
    );
    const pageInfo = byTestId('page-info');
    await pageInfo.filter({ hasText: 'Page 10 of 10+ · more than 1000 events' }).waitFor();
    const rows = () => page.locator('[data-testid="event-row"]').count();
    expect(await rows()).toBe(100);
    await byTestId('page-next').click();
    // Page 11 holds the last match alone: the second row of page 10 goes.
    await page.locator('[data-testid="event-row"]').nth(1).waitFor({ state: 'detached' });
    expect(await rows()).toBe(1);
    expect(await pageInfo.textContent()).toContain('Page 11 of 11+');
    expect(new URL(page.url()).hash).toContain('page=11');
    expect(await byTestId('page-next').isDisabled()).toBe(true);
    await expectNoReload(loadsBefore);
  });

  step(
    'sets a Stripe signature check in the Ingest rules panel; its secret is only ever shown masked',
    async () => {
      const token = await accessToken();
      const created = await api(sut!.url, 'POST', '/api/endpoints', {
        token,
        body: { name: 'Stripe signed' },
      });
      expect(created.status).toBe(201);
      signed.endpointId = created.body.endpoint.id;
      signed.capturePath = new URL(created.body.endpoint.capture_url).pathname;
      const destination = await api(sut!.url, 'POST', `/api/endpoints/${signed.endpointId}/destinations`, {
        token,
        body: { url: sink!.url },
      });
      expect(destination.status).toBe(201);
      signed.destinationId = destination.body.destination.id;
      const loadsBefore = watch.loads();
      await page.evaluate(`window.location.hash = '/endpoints/${signed.endpointId}'`);

      const panel = page.getByRole('region', { name: 'Ingest rules' });
      expect(await byTestId('rules-verification', panel).textContent()).toBe('Not checked');
      await panel.getByRole('button', { name: 'Edit ingest rules' }).click();
      await panel.getByLabel('Signature provider').selectOption('stripe');
      await panel.getByLabel('Signing secret').fill(STRIPE_SECRET);
      await panel.getByLabel('When it fails').selectOption('flag');
      const patch = page.waitForRequest(
        (request) =>
          request.method() === 'PATCH' && request.url().endsWith(`/api/endpoints/${signed.endpointId}`),
      );
      await panel.getByRole('button', { name: 'Save rules' }).click();
      // Only the rule that changed is sent.
      expect(JSON.parse((await patch).postData() ?? '')).toEqual({
        verification: { provider: 'stripe', mode: 'flag', secret: STRIPE_SECRET, tolerance_seconds: 300 },
      });

      const masked = `••••${STRIPE_SECRET.slice(-4)}`;
      const summary = byTestId('rules-verification', panel);
      await summary.filter({ hasText: masked }).waitFor();
      expect(await summary.textContent()).toMatch(
        /^Stripe, flagged .*, timestamps within 300 s, secret ••••7f3a$/,
      );
      const stored = await api(sut!.url, 'GET', `/api/endpoints/${signed.endpointId}`, { token });
      expect(stored.body.endpoint.verification).toEqual({
        provider: 'stripe',
        secret: masked,
        mode: 'flag',
        tolerance_seconds: 300,
      });
      expect(JSON.stringify(stored.body)).not.toContain(STRIPE_SECRET);
      expect(await page.content()).not.toContain(STRIPE_SECRET);

      // Editing again offers to keep the stored secret, which the page never had.
      await panel.getByRole('button', { name: 'Edit ingest rules' }).click();
      const secret = panel.getByLabel('Signing secret');
      expect(await secret.inputValue()).toBe('');
      expect(await secret.getAttribute('placeholder')).toBe(`leave empty to keep ${masked}`);
      await panel.getByRole('button', { name: 'Cancel' }).click();
      await panel.getByRole('button', { name: 'Edit ingest rules' }).waitFor();
      await expectNoReload(loadsBefore);
    },
  );

  step(
    'marks a capture whose signature fails, filters the list on it, and explains it and its routing after a destination filter is saved',
    async () => {
      const loadsBefore = watch.loads();
      await byTestId('events-empty').waitFor();
      await page.locator('[data-testid="live-status"][data-state="open"]').waitFor();
      const badId = await captureSigned(TAMPERED_BODY);
      const goodId = await captureSigned(SIGNED_BODY);
      const verification = (eventId: string, status: string) =>
        eventRow(eventId).locator(`[data-testid="verification-badge"][data-verification="${status}"]`);
      await verification(badId, 'failed').waitFor({ timeout: LIVE_TIMEOUT_MS });
      await verification(goodId, 'verified').waitFor({ timeout: LIVE_TIMEOUT_MS });
      expect(await verification(badId, 'failed').textContent()).toContain('Signature failed');

      await page.getByLabel('Signature', { exact: true }).selectOption('failed');
      await eventRow(goodId).waitFor({ state: 'detached' });
      expect(await byTestId('event-row').count()).toBe(1);
      expect(await eventRow(badId).count()).toBe(1);
      expect(new URL(page.url()).hash).toBe(`#/endpoints/${signed.endpointId}?verification=failed`);
      await byTestId('bulk-replay-unavailable').waitFor();

      // A filter that the tampered invoice does not match.
      const destination = page.locator(
        `[data-testid="destination-row"][data-destination-id="${signed.destinationId}"]`,
      );
      await destination.getByRole('button', { name: `Edit filter of ${sink!.url}` }).click();
      await destination.getByLabel('Filter (JSON)').fill(JSON.stringify(CUSTOMERS_ONLY));
      await destination.getByRole('button', { name: 'Save filter' }).click();
      const rule = byTestId('destination-filter-rule', destination);
      await rule.waitFor();
      expect(JSON.parse((await rule.textContent()) ?? '')).toEqual(CUSTOMERS_ONLY);
      const stored = await api(
        sut!.url,
        'GET',
        `/api/endpoints/${signed.endpointId}/destinations/${signed.destinationId}`,
        { token: await accessToken() },
      );
      expect(stored.body.destination.filter).toEqual(CUSTOMERS_ONLY);

      await openEvent(badId);
      const shown = byTestId('event-verification');
      expect(await shown.getAttribute('data-verification')).toBe('failed');
      expect(await byTestId('event-verification-reason').textContent()).toMatch(/signature/);
      const routing = page.getByRole('region', { name: 'Routing' });
      const route = routing.locator('[data-testid="route"][data-receives="false"]');
      await route.waitFor();
      expect(await route.textContent()).toContain(sink!.url);
      expect(await byTestId('route-reason', route).textContent()).toContain('body.type');

      await routing.getByLabel('Filter (JSON)').fill('{"body": {"type": "invoice.paid"}}');
      await routing.getByRole('button', { name: 'Test filter' }).click();
      await routing.locator('[data-testid="filter-test-result"][data-matches="true"]').waitFor();

      // A replay goes where a capture would: nowhere, and the page says why and what to do.
      const deliveriesOfBadEvent = async () =>
        (
          await api(sut!.url, 'GET', `/api/endpoints/${signed.endpointId}/events/${badId}`, {
            token: await accessToken(),
          })
        ).body.event.deliveries.length as number;
      const deliveriesBefore = await deliveriesOfBadEvent();
      const errorsBefore = watch.consoleErrors.length;
      await byTestId('replay').click();
      const refused = page.locator('[data-testid="replay-result"]', {
        hasText: 'no active destination would receive this event',
      });
      await refused.waitFor();
      expect(await refused.textContent()).toContain(sink!.url);
      expect(await refused.textContent()).toContain('change a filter of a destination on the endpoint page');
      expect(await refused.getAttribute('role')).toBe('alert');
      expect(watch.consoleErrors.splice(errorsBefore)).toEqual([
        'Failed to load resource: the server responded with a status of 409 (Conflict)',
      ]);
      expect(await deliveriesOfBadEvent()).toBe(deliveriesBefore);
      await expectNoReload(loadsBefore);
    },
  );

  step(
    'creates a read API key on its page, reached from the header: shown once, with the CLI login line',
    async () => {
      const loadsBefore = watch.loads();
      await openApiKeysPage();
      await byTestId('api-keys-empty').waitFor();
      const form = page.getByRole('region', { name: 'New API key', exact: true });

      // A name of spaces: the API's 400 names the field, under the form. Chrome logs the refused request
      // as a console error: that one is expected, and taken off the list the last step checks.
      await form.getByLabel('Name').fill('   ');
      const errorsBefore = watch.consoleErrors.length;
      const logged = page.waitForEvent('console', (message) => message.type() === 'error');
      await form.getByRole('button', { name: 'Create API key' }).click();
      expect(await byTestId('api-key-error', form).textContent()).toContain(
        'name must be 1 to 100 characters',
      );
      await logged;
      expect(watch.consoleErrors.splice(errorsBefore)).toEqual([
        'Failed to load resource: the server responded with a status of 400 (Bad Request)',
      ]);

      await form.getByLabel('Name').fill(API_KEY_NAME);
      await form.getByRole('radio', { name: 'Read', exact: true }).check();
      await form.getByLabel('Expires').selectOption({ label: 'In 30 days' });
      const posted = page.waitForResponse(
        (response) => response.request().method() === 'POST' && response.url().endsWith('/api/api-keys'),
      );
      await form.getByRole('button', { name: 'Create API key' }).click();
      const created = await posted;
      expect(created.status()).toBe(201);
      const sent = JSON.parse(created.request().postData() ?? '') as { expires_at: string };
      expect(sent).toMatchObject({ name: API_KEY_NAME, scope: 'read' });
      expect(Math.abs(Date.parse(sent.expires_at) - Date.now() - 30 * DAY_MS)).toBeLessThan(60_000);

      const notice = byTestId('new-api-key');
      apiKey.key = ((await byTestId('new-api-key-value', notice).textContent()) ?? '').trim();
      expect(apiKey.key).toMatch(/^htk_[A-Za-z0-9_-]{40,}$/);
      apiKey.prefix = apiKey.key.slice(0, 12);
      expect(await notice.textContent()).toContain('it will not be shown again');
      expect(await byTestId('cli-login-command', notice).textContent()).toBe(
        `hooktrail login --url ${sut!.url} --api-key ${apiKey.key}`,
      );
      await notice.getByRole('button', { name: 'Copy the API key' }).waitFor();

      const row = byTestId('api-key-row');
      apiKey.id = (await row.getAttribute('data-api-key-id')) ?? '';
      expect(apiKey.id).not.toBe('');
      expect(await byTestId('api-key-prefix', row).textContent()).toBe(`${apiKey.prefix}…`);
      expect(await byTestId('api-key-scope', row).getAttribute('data-scope')).toBe('read');
      expect(await byTestId('api-key-expires', row).textContent()).toMatch(/\d{4}/);
      expect(await byTestId('api-key-last-used', row).textContent()).toBe('never');

      // On a phone: the header still leads here, and the notice (a long key) fits the width.
      await page.setViewportSize(PHONE);
      try {
        await page
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: 'API keys' })
          .waitFor();
        const keysPage = await horizontalOverflow(page);
        expect(keysPage.scrollWidth).toBeLessThanOrEqual(keysPage.innerWidth);
      } finally {
        await page.setViewportSize(DESKTOP);
      }

      await notice.getByRole('button', { name: 'Done, I have copied it' }).click();
      await notice.waitFor({ state: 'detached' });
      expect(await page.content()).not.toContain(apiKey.key);
      await expectNoReload(loadsBefore);
    },
  );

  step(
    'the key reads the API but may not write; the list then shows its last use, never the key',
    async () => {
      expect(await endpointsWithKey()).toBe(200);
      const write = await api(sut!.url, 'POST', '/api/endpoints', {
        token: apiKey.key,
        body: { name: 'Written with a read key' },
      });
      expect(write.status).toBe(403);
      const usedAt = await keyLastUsedAt();

      const loadsBefore = watch.loads();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Endpoints' }).click();
      await byTestId('endpoints-list').waitFor();
      await openApiKeysPage();
      const lastUsed = byTestId('api-key-last-used', byTestId('api-key-row'));
      expect(await lastUsed.textContent()).not.toBe('never');
      expect(await lastUsed.textContent()).toContain(String(new Date(usedAt).getFullYear()));
      expect(await page.content()).not.toContain(apiKey.key);
      await expectNoReload(loadsBefore);
    },
  );

  step('revokes the key in a confirm dialog (Cancel keeps it); the API then answers 401', async () => {
    const loadsBefore = watch.loads();
    const revoke = page.getByRole('button', { name: `Revoke ${API_KEY_NAME} (${apiKey.prefix}…)` });
    const dialog = page.getByRole('dialog', { name: 'Revoke this API key?' });
    await revoke.click();
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(`${API_KEY_NAME} (${apiKey.prefix}…) stops working at once`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await byTestId('api-key-row').count()).toBe(1);
    expect(await endpointsWithKey()).toBe(200);

    await revoke.click();
    const deleted = page.waitForResponse(
      (response) =>
        response.request().method() === 'DELETE' && response.url().endsWith(`/api/api-keys/${apiKey.id}`),
    );
    await byTestId('confirm-revoke', dialog).click();
    expect((await deleted).status()).toBe(200);
    await byTestId('api-keys-empty').waitFor();
    await dialog.waitFor({ state: 'hidden' });
    expect(await endpointsWithKey()).toBe(401);
    await expectNoReload(loadsBefore);
  });

  step(
    'adds a signed webhook notification channel (secret shown once), sends it a test, deletes it after a confirmation',
    async () => {
      const loadsBefore = watch.loads();
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Notifications' })
        .click();
      await page.waitForURL((url) => url.hash === '#/notifications');
      await byTestId('channels-empty').waitFor();
      const form = page.getByRole('region', { name: 'New channel' });
      await form.getByLabel('Type').selectOption('webhook');
      await form.getByLabel('HTTPS URL').fill(channelSink!.url);
      await form.getByRole('checkbox', { name: 'Destination paused' }).check();
      await form.getByRole('checkbox', { name: 'Issue opened' }).uncheck();
      const posted = page.waitForResponse(
        (response) =>
          response.request().method() === 'POST' && response.url().endsWith('/api/notification-channels'),
      );
      await form.getByRole('button', { name: 'Add channel' }).click();
      const created = await posted;
      expect(created.status()).toBe(201);
      expect(JSON.parse(created.request().postData() ?? '')).toEqual({
        type: 'webhook',
        target: channelSink!.url,
        events: ['dead_letter', 'destination.paused'],
      });
      const { channel } = (await created.json()) as { channel: { id: string; secret: string } };

      const notice = byTestId('channel-secret');
      const secret = ((await byTestId('channel-secret-value', notice).textContent()) ?? '').trim();
      expect(secret).toBe(channel.secret);
      expect(secret).toMatch(/^whsec_/);
      await notice.getByRole('button', { name: 'Copy the signing secret' }).waitFor();
      const row = page.locator(`[data-testid="channel-row"][data-channel-id="${channel.id}"]`);
      expect(await row.getAttribute('data-type')).toBe('webhook');
      expect(await byTestId('channel-target', row).textContent()).toBe(channelSink!.url);
      expect(await byTestId('channel-events', row).textContent()).toBe(
        'Tells about: Dead letters, Destination paused',
      );
      expect(await byTestId('channel-health', row).textContent()).toBe('Working, nothing sent yet');
      await notice.getByRole('button', { name: 'Done, I have copied it' }).click();
      await notice.waitFor({ state: 'detached' });
      expect(await page.content()).not.toContain(secret);

      // A test goes through: the outcome is shown, and the message verifies under the secret shown once.
      await row.getByRole('button', { name: `Send a test to ${channelSink!.url}` }).click();
      const outcome = byTestId('channel-test-result', row);
      await outcome.waitFor();
      expect(await outcome.getAttribute('data-ok')).toBe('true');
      const [message] = await channelSink!.waitForRequests(1);
      const verified = new Webhook(Buffer.from(secret, 'utf8').toString('base64')).verify(
        message.body.toString('utf8'),
        {
          'webhook-id': String(message.headers['hooktrail-id']),
          'webhook-timestamp': String(message.headers['hooktrail-timestamp']),
          'webhook-signature': String(message.headers['hooktrail-signature']),
        },
      );
      expect(verified).toMatchObject({ type: 'test', data: { channel_id: channel.id } });
      await byTestId('channel-health', row)
        .filter({ hasText: /^Working, last sent / })
        .waitFor();

      // A test the receiver refuses says so.
      channelSink!.respondWith(answer(500, 'down for maintenance'));
      await row.getByRole('button', { name: `Send a test to ${channelSink!.url}` }).click();
      await row.locator('[data-testid="channel-test-result"][data-ok="false"]').waitFor();
      expect(await outcome.textContent()).toMatch(/^The test failed: .*500/);

      // On a phone the page fits the width.
      await page.setViewportSize(PHONE);
      try {
        const channelsPage = await horizontalOverflow(page);
        expect(channelsPage.scrollWidth).toBeLessThanOrEqual(channelsPage.innerWidth);
      } finally {
        await page.setViewportSize(DESKTOP);
      }

      const dialog = page.getByRole('dialog', { name: 'Delete this channel?' });
      await row.getByRole('button', { name: `Delete the Webhook channel ${channelSink!.url}` }).click();
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      expect(await row.count()).toBe(1);
      await row.getByRole('button', { name: `Delete the Webhook channel ${channelSink!.url}` }).click();
      const deleted = page.waitForResponse(
        (response) =>
          response.request().method() === 'DELETE' &&
          response.url().endsWith(`/api/notification-channels/${channel.id}`),
      );
      await byTestId('confirm-delete-channel', dialog).click();
      expect((await deleted).status()).toBe(200);
      await byTestId('channels-empty').waitFor();
      const listed = await api(sut!.url, 'GET', '/api/notification-channels', { token: await accessToken() });
      expect(listed.body.channels).toEqual([]);
      await expectNoReload(loadsBefore);
    },
  );

  step('logs out, back to the auth screen', async () => {
    const loadsBefore = watch.loads();
    await byTestId('logout').click();
    const submit = byTestId('submit-auth');
    await submit.waitFor();
    expect(await submit.textContent()).toBe('Log in');
    expect(await byTestId('logout').count()).toBe(0);
    expect(await page.evaluate('localStorage.getItem("hooktrail.accessToken")')).toBeNull();
    await expectNoReload(loadsBefore);
    expect(watch.errors).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
  });

  /** Waits for the page's hash to become `hash` (filters are written to it without a navigation). */
  async function waitForHash(hash: string): Promise<void> {
    for (const deadline = Date.now() + 5000; new URL(page.url()).hash !== hash;) {
      if (Date.now() > deadline) throw new Error(`the hash stayed ${new URL(page.url()).hash}, not ${hash}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Pixels of the events chart's canvas in each status's colour (the bars, filled in those colours). */
  async function chartPixels(): Promise<{
    width: number;
    height: number;
    received: number;
    delivered: number;
    failed: number;
  }> {
    // A string, not a function: the test's TypeScript has no DOM types.
    const counted = await page.evaluate<{
      width: number;
      height: number;
      received: number;
      delivered: number;
      failed: number;
    } | null>(
      `(() => {
        const canvas = document.querySelector('[data-testid="stats-events-chart"] canvas');
        if (!canvas) return null;
        const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
        const colours = { received: [59, 130, 246], delivered: [22, 163, 74], failed: [234, 88, 12] };
        const counts = { width: canvas.width, height: canvas.height, received: 0, delivered: 0, failed: 0 };
        for (let i = 0; i < data.length; i += 4) {
          for (const [status, [r, g, b]] of Object.entries(colours)) {
            if (data[i] === r && data[i + 1] === g && data[i + 2] === b && data[i + 3] === 255) counts[status]++;
          }
        }
        return counts;
      })()`,
    );
    expect(counted).not.toBeNull();
    return counted!;
  }

  /**
   * A 1280×800 screenshot. The page is scrolled first so that the card (section) holding `selector`
   * starts at the top of the viewport (`align: 'top'`) or ends at its bottom (`'bottom'`).
   */
  async function cardScreenshot(name: string, selector: string, align: 'top' | 'bottom'): Promise<void> {
    await screenshot(
      page,
      name,
      `(({ selector, align }) => {
        const card = document.querySelector(selector)?.closest('section');
        if (!card) return false;
        const box = card.getBoundingClientRect();
        const margin = 16;
        window.scrollBy(0, align === 'top' ? box.top - margin : box.bottom + margin - window.innerHeight);
        return true;
      })(${JSON.stringify({ selector, align })})`,
    );
  }
});
