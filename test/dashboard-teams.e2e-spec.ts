import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { Client } from 'pg';
import { api, registerUser, type RegisteredUser, uniqueEmail } from './support/api-client';
import {
  closeAll,
  horizontalOverflow,
  launchChromium,
  type PageWatch,
  screenshot,
  storySteps,
  watchPage,
} from './support/browser';
import { eventually } from './support/eventually';
import { SmtpSink } from './support/smtp-sink';
import { startTestApp, type TestApp } from './support/test-app';

/**
 * Teams in the dashboard, in real headless Chromium with two people in two browsers: the owner signs up,
 * meets the upgrade message on the free plan, creates a team on the team plan, creates an endpoint in it
 * from the header's team switcher and invites a viewer. The viewer opens the mail's link (read from a
 * real SMTP server) logged out, logs in, comes back to the invitation, accepts it, and sees the team's
 * endpoint without one button that changes it. The owner makes the viewer a member: after a reload the
 * buttons are there, and the new member renames the endpoint. The owner's audit log lists the team's
 * writes with their actors, secrets redacted. The steps run in order; once one fails, the later ones fail
 * at once naming it. It takes the README's screenshots, which `npm run screenshots` writes:
 * docs/dashboard-teams.png and docs/dashboard-audit.png.
 */

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** What registerUser (test/support/api-client.ts) signs up with. */
const PASSWORD = 'correct horse battery';
const TEAM_NAME = 'Payments';
const ENDPOINT_NAME = 'Stripe (team)';
const RENAMED = 'Stripe (team, EU)';
const MOVED_NAME = 'GitHub (was personal)';
const DESTINATION_SECRET = 'whsec_team_dashboard_7Qz';
/** The invitation mail's link: the dashboard's accept page with a 43-character base64url token. */
const INVITATION_LINK = /(https?:\/\/\S+?)(#\/invitations\/accept\?token=[A-Za-z0-9_-]{43})\s/;
/** Every control that changes an endpoint, its destinations or its events: none is shown to a viewer. */
/** What changes the team itself: none is shown to a viewer (nor to a member). */
const TEAM_ADMIN_CONTROLS = [
  'member-role-select',
  'remove-member',
  'invite-email',
  'rename-team',
  'delete-team',
];
const WRITE_CONTROLS = [
  'endpoint-active-toggle',
  'edit-ingest-rules',
  'save-endpoint-settings',
  'destination-url',
  'add-destination',
  'destination-active-toggle',
  'destination-pause-toggle',
  'remove-destination',
  'edit-limits',
  'edit-filter',
  'bulk-replay-start',
];

/** What shows a destination's secret: the API answers it only to a member or above, so a viewer has neither. */
const SECRET_CONTROLS = ['reveal-secret', 'copy-secret'];

interface Person {
  context: BrowserContext;
  page: Page;
  watch: PageWatch;
  email: string;
}

describe('dashboard: teams, roles and the audit log in headless Chromium', () => {
  let sut: TestApp | undefined;
  let smtp: SmtpSink | undefined;
  let db: Client | undefined;
  let browser: Browser | undefined;
  let owner: Person;
  let viewer: Person & { user?: RegisteredUser };

  /** What the steps learn and hand on. */
  const flow = { teamId: '', endpointId: '', eventId: '', invitationHash: '', viewerId: '' };

  const openPerson = async (email: string): Promise<Person> => {
    const context = await browser!.newContext({ viewport: DESKTOP, deviceScaleFactor: 1, locale: 'en-GB' });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    return { context, page, watch: watchPage(page), email };
  };

  beforeAll(async () => {
    browser = await launchChromium();
    smtp = await SmtpSink.start();
    sut = await startTestApp({ SMTP_URL: smtp.url });
    const index = await fetch(`${sut.url}/`);
    if (index.status !== 200 || !(index.headers.get('content-type') ?? '').includes('text/html')) {
      throw new Error(
        `GET / answered ${index.status}: no dashboard build in dist/web; run \`npm run build:web\` first.`,
      );
    }
    db = new Client({ connectionString: sut.env.DATABASE_URL });
    await db.connect();
    owner = await openPerson(uniqueEmail('owner'));
    viewer = await openPerson(uniqueEmail('viewer'));
  });

  afterAll(async () => {
    // Every close runs even when an earlier one throws; the browser goes first so no stream holds the server.
    const closers = [
      () => owner?.context.close(),
      () => viewer?.context.close(),
      () => browser?.close(),
      () => db?.end(),
      () => sut?.close(),
      () => smtp?.close(),
    ];
    await closeAll(closers);
  });

  /** Adds what each page said (uncaught errors, console errors, where it was) to a failure. */
  const withPageDiagnostics = (error: unknown): unknown => {
    if (!(error instanceof Error)) return error;
    const notes: string[] = [];
    for (const [who, person] of [
      ['owner', owner],
      ['viewer', viewer],
    ] as const) {
      if (!person) continue;
      notes.push(`${who}'s page URL: ${person.page.url()}`);
      if (person.watch.errors.length > 0)
        notes.push(`${who}'s page errors:\n  ${person.watch.errors.join('\n  ')}`);
      if (person.watch.consoleErrors.length > 0)
        notes.push(`${who}'s console errors:\n  ${person.watch.consoleErrors.join('\n  ')}`);
    }
    error.message += `\n\n${notes.join('\n')}`;
    const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
    error.stack = [`${error.name}: ${error.message}`, ...frames].join('\n');
    return error;
  };
  const step = storySteps(withPageDiagnostics);

  const byTestId = (scope: Page | Locator, testId: string) => scope.locator(`[data-testid="${testId}"]`);
  const mainNav = (page: Page) => page.getByRole('navigation', { name: 'Main' });

  /** The page's access token, for calls to the API beside the page. */
  const accessToken = async (page: Page) =>
    String(await page.evaluate('localStorage.getItem("hooktrail.accessToken")'));

  /** How many of `testIds` the page shows (a viewer's pages must show none of the write controls). */
  const countShown = async (page: Page, testIds: readonly string[]) => {
    const counts: Record<string, number> = {};
    for (const testId of testIds) counts[testId] = await byTestId(page, testId).count();
    return counts;
  };
  const none = (testIds: readonly string[]) => Object.fromEntries(testIds.map((testId) => [testId, 0]));

  /** The team endpoint's page, loaded: its destination and its event are listed. */
  async function openTeamEndpoint(page: Page): Promise<void> {
    await page.evaluate(`window.location.hash = '/endpoints/${flow.endpointId}'`);
    await byTestId(page, 'destination-row').waitFor();
    await page.locator(`[data-testid="event-row"][data-event-id="${flow.eventId}"]`).waitFor();
    await byTestId(page, 'endpoint-role').waitFor();
  }

  /** The team endpoint's event, loaded: the breadcrumb names the endpoint once it (and the role) is. */
  async function openTeamEvent(page: Page): Promise<void> {
    await page.locator(`[data-testid="event-row"][data-event-id="${flow.eventId}"] a`).click();
    await page.locator(`[data-testid="event-detail"][data-event-id="${flow.eventId}"]`).waitFor();
    await page.locator('nav.breadcrumbs a', { hasText: ENDPOINT_NAME }).waitFor();
  }

  async function openTeamPage(page: Page): Promise<void> {
    await mainNav(page).getByRole('link', { name: 'Teams' }).click();
    await page.locator(`[data-testid="team-row"][data-team-id="${flow.teamId}"] a`).click();
    await page.locator(`[data-testid="team-page"][data-team-id="${flow.teamId}"]`).waitFor();
  }

  step(
    'the owner signs up from the teams page; on the free plan, a new team shows the upgrade message',
    async () => {
      const { page } = owner;
      await page.goto(`${sut!.url}/#/teams`);
      await byTestId(page, 'toggle-auth-mode').click();
      await byTestId(page, 'name').fill('Olga Owner');
      await byTestId(page, 'email').fill(owner.email);
      await byTestId(page, 'password').fill(PASSWORD);
      await byTestId(page, 'submit-auth').click();

      // Logged in, the address asked for opens: the teams page.
      await byTestId(page, 'teams-empty').waitFor();
      expect(new URL(page.url()).hash).toBe('#/teams');
      expect(await byTestId(page, 'team-switcher').count()).toBe(0);
      await byTestId(page, 'new-team-name').fill(TEAM_NAME);
      const refused = page.waitForResponse(
        (r) => r.request().method() === 'POST' && r.url().endsWith('/api/teams'),
      );
      await byTestId(page, 'create-team').click();
      expect((await refused).status()).toBe(403);
      const upgrade = byTestId(page, 'team-upgrade');
      await upgrade.waitFor();
      expect(await upgrade.textContent()).toContain('Teams are on the Team plan');
    },
  );

  step('on the team plan, the owner creates the team and lands on its page, as its owner', async () => {
    const { page } = owner;
    const { rowCount } = await db!.query(`update users set plan = 'team' where email = $1`, [owner.email]);
    expect(rowCount).toBe(1);
    await byTestId(page, 'create-team').click();
    const teamPage = page.locator('[data-testid="team-page"][data-role="owner"]');
    await teamPage.waitFor();
    flow.teamId = (await teamPage.getAttribute('data-team-id')) ?? '';
    expect(new URL(page.url()).hash).toBe(`#/teams/${flow.teamId}`);
    expect(await byTestId(page, 'team-name').textContent()).toBe(TEAM_NAME);
    const members = byTestId(page, 'member-row');
    expect(await members.count()).toBe(1);
    expect(await byTestId(members, 'member-email').textContent()).toBe(owner.email);
    expect(await byTestId(page, 'delete-team').count()).toBe(1);
    await byTestId(page, 'invitations-empty').waitFor();
    // The header's switcher now offers the team.
    await page
      .locator(`[data-testid="team-switcher"] option[value="${flow.teamId}"]`)
      .waitFor({ state: 'attached' });
  });

  step('the owner switches to the team in the header and creates an endpoint there', async () => {
    const { page } = owner;
    await byTestId(page, 'team-switcher').selectOption(flow.teamId);
    await page.waitForURL((url) => url.hash === '#/');
    await page.getByRole('heading', { name: `New endpoint in ${TEAM_NAME}` }).waitFor();
    await byTestId(page, 'endpoints-empty').waitFor();
    await byTestId(page, 'new-endpoint-name').fill(ENDPOINT_NAME);
    await byTestId(page, 'create-endpoint').click();
    const row = byTestId(page, 'endpoint-row');
    await row.waitFor();
    flow.endpointId = (await row.getAttribute('data-endpoint-id')) ?? '';
    expect(await byTestId(row, 'endpoint-team').textContent()).toBe(TEAM_NAME);

    const token = await accessToken(page);
    const created = await api(sut!.url, 'GET', `/api/endpoints/${flow.endpointId}`, { token });
    expect(created.body.endpoint).toMatchObject({ team_id: flow.teamId, role: 'owner', name: ENDPOINT_NAME });
    // An event first, then a destination: nothing is forwarded (the destination is never called).
    const captured = await fetch(`${sut!.url}${new URL(created.body.endpoint.capture_url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'invoice.paid', id: 'evt_team_1' }),
    });
    expect(captured.status).toBe(200);
    flow.eventId = ((await captured.json()) as { id: string }).id;
    const destination = await api(sut!.url, 'POST', `/api/endpoints/${flow.endpointId}/destinations`, {
      token,
      body: { url: 'https://payments.example.com/hooks', secret: DESTINATION_SECRET },
    });
    expect(destination.status).toBe(201);

    // The personal scope does not list it; the choice is kept across a reload.
    await byTestId(page, 'team-switcher').selectOption('');
    await byTestId(page, 'endpoints-empty').waitFor();
    await byTestId(page, 'team-switcher').selectOption(flow.teamId);
    await row.waitFor();
    await page.reload();
    await page.locator(`[data-testid="endpoint-row"][data-endpoint-id="${flow.endpointId}"]`).waitFor();
    expect(await byTestId(page, 'team-switcher').inputValue()).toBe(flow.teamId);
  });

  step(
    'the owner moves a personal endpoint into the team and shortens its retention, in its settings',
    async () => {
      const { page } = owner;
      const token = await accessToken(page);
      const created = await api(sut!.url, 'POST', '/api/endpoints', { token, body: { name: MOVED_NAME } });
      expect(created.body.endpoint).toMatchObject({ team_id: null, retention_days: null, role: 'owner' });
      const movedId: string = created.body.endpoint.id;
      await page.evaluate(`window.location.hash = '/endpoints/${movedId}'`);
      const settings = page.getByRole('region', { name: 'Team and retention' });
      expect(await byTestId(settings, 'endpoint-team-name').textContent()).toBe('None: personal');
      await settings.getByLabel('Team', { exact: true }).selectOption(flow.teamId);
      await settings.getByLabel('Keep events (days)').fill('30');
      await byTestId(settings, 'save-endpoint-settings').click();
      await settings.locator('[data-testid="endpoint-team-name"] a', { hasText: TEAM_NAME }).waitFor();
      expect(await byTestId(settings, 'endpoint-retention-value').textContent()).toBe('at most 30 days');
      const stored = await api(sut!.url, 'GET', `/api/endpoints/${movedId}`, { token });
      expect(stored.body.endpoint).toMatchObject({ team_id: flow.teamId, retention_days: 30, role: 'owner' });
    },
  );

  step('the owner invites the viewer; the mail carries the link to the acceptance page', async () => {
    const { page } = owner;
    viewer.user = await registerUser(sut!.url, viewer.email);
    flow.viewerId = viewer.user.id;
    await openTeamPage(page);
    const mailsBefore = smtp!.mails.length;
    await byTestId(page, 'invite-email').fill(viewer.email);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await byTestId(page, 'send-invitation').click();
    const invitation = page.locator('[data-testid="invitation-row"]', { hasText: viewer.email });
    await invitation.waitFor();
    expect(await invitation.textContent()).toContain('Viewer');

    const mail = await eventually(
      async () => smtp!.mails.slice(mailsBefore).find((received) => received.to.includes(viewer.email)),
      (found) => found !== undefined,
    );
    const link = INVITATION_LINK.exec(mail!.text);
    expect(link).not.toBeNull();
    // The link carries SITE_URL (http://localhost:3000 by default); the test app listens elsewhere.
    flow.invitationHash = link![2];
  });

  step('the viewer opens the link logged out, logs in, and is brought back to accept it', async () => {
    const { page } = viewer;
    await page.goto(`${sut!.url}/${flow.invitationHash}`);
    const notice = page.locator('.auth-card [role="status"]');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('You were invited to a team');
    await byTestId(page, 'email').fill(viewer.email);
    await byTestId(page, 'password').fill(PASSWORD);
    await byTestId(page, 'submit-auth').click();

    await byTestId(page, 'invitation-page').waitFor();
    expect(new URL(page.url()).hash).toBe(flow.invitationHash);
    await byTestId(page, 'accept-invitation').click();
    const accepted = byTestId(page, 'invitation-accepted');
    await accepted.waitFor();
    expect(await accepted.textContent()).toContain(`You joined ${TEAM_NAME}`);
    expect(await byTestId(accepted, 'joined-role').textContent()).toBe('Viewer');
    await byTestId(page, 'open-team-endpoints').click();
    await page.waitForURL((url) => url.hash === '#/');
  });

  step(
    'the viewer sees the team endpoint, its destination and event, and no button that changes them',
    async () => {
      const { page } = viewer;
      const row = page.locator(`[data-testid="endpoint-row"][data-endpoint-id="${flow.endpointId}"]`);
      await row.waitFor();
      expect(await byTestId(page, 'team-switcher').inputValue()).toBe(flow.teamId);
      expect(await byTestId(row, 'endpoint-team').textContent()).toBe(TEAM_NAME);
      expect(
        await countShown(page, [
          'new-endpoint-name',
          'create-endpoint',
          'rename-endpoint',
          'delete-endpoint',
        ]),
      ).toEqual(none(['new-endpoint-name', 'create-endpoint', 'rename-endpoint', 'delete-endpoint']));

      // The team page: members, read-only.
      await openTeamPage(page);
      expect(await byTestId(page, 'team-my-role').getAttribute('data-role')).toBe('viewer');
      expect(await byTestId(page, 'member-row').count()).toBe(2);
      expect(await countShown(page, TEAM_ADMIN_CONTROLS)).toEqual(none(TEAM_ADMIN_CONTROLS));

      await openTeamEndpoint(page);
      expect(await byTestId(page, 'endpoint-role').getAttribute('data-role')).toBe('viewer');
      expect(await byTestId(page, 'rules-verification').textContent()).toBe('Not checked');
      expect(await countShown(page, WRITE_CONTROLS)).toEqual(none(WRITE_CONTROLS));
      // The destination's secret: said to be set, never shown (the API sent null), nothing to reveal or copy.
      const secretState = byTestId(page, 'destination-secret-state');
      expect(await secretState.getAttribute('data-set')).toBe('true');
      expect(await secretState.textContent()).toBe('set (requests are signed; hidden for your role)');
      expect(await countShown(page, SECRET_CONTROLS)).toEqual(none(SECRET_CONTROLS));
      expect(await page.content()).not.toContain(DESTINATION_SECRET);

      await openTeamEvent(page);
      expect(await byTestId(page, 'replay').count()).toBe(0);
    },
  );

  step(
    'the owner makes the viewer a member; after a reload the viewer has the buttons, and renames the endpoint',
    async () => {
      const ownerPage = owner.page;
      await openTeamPage(ownerPage);
      const member = ownerPage.locator(`[data-testid="member-row"][data-user-id="${flow.viewerId}"]`);
      expect(await member.getAttribute('data-role')).toBe('viewer');
      await byTestId(member, 'member-role-select').selectOption('member');
      await ownerPage
        .locator(`[data-testid="member-row"][data-user-id="${flow.viewerId}"][data-role="member"]`)
        .waitFor();

      // The viewer's event page, as it was loaded: still without Replay, until a reload.
      const { page } = viewer;
      expect(await byTestId(page, 'replay').count()).toBe(0);
      await page.reload();
      await byTestId(page, 'replay').waitFor();

      await openTeamEndpoint(page);
      expect(await byTestId(page, 'endpoint-role').getAttribute('data-role')).toBe('member');
      const shown = await countShown(page, [...WRITE_CONTROLS, ...SECRET_CONTROLS]);
      expect([...WRITE_CONTROLS, ...SECRET_CONTROLS].filter((testId) => shown[testId] === 0)).toEqual([]);
      // As a member, the secret is theirs to see, on demand, as the owner sees it.
      expect(await byTestId(page, 'destination-secret-state').count()).toBe(0);
      await byTestId(page, 'reveal-secret').click();
      expect(await byTestId(page, 'destination-secret-value').textContent()).toBe(DESTINATION_SECRET);

      await mainNav(page).getByRole('link', { name: 'Endpoints' }).click();
      const row = page.locator(`[data-testid="endpoint-row"][data-endpoint-id="${flow.endpointId}"]`);
      await byTestId(row, 'rename-endpoint').click();
      await byTestId(row, 'rename-input').fill(RENAMED);
      await byTestId(row, 'rename-save').click();
      await page.locator('[data-testid="endpoint-link"]', { hasText: RENAMED }).waitFor();
    },
  );

  step('the team page shows members with their roles and a pending invitation (screenshot)', async () => {
    const { page } = owner;
    await page.reload();
    await page
      .locator(`[data-testid="member-row"][data-user-id="${flow.viewerId}"][data-role="member"]`)
      .waitFor();
    await byTestId(page, 'invite-email').fill('grace.admin@example.com');
    await page.getByLabel('Role', { exact: true }).selectOption('admin');
    await byTestId(page, 'send-invitation').click();
    await page.locator('[data-testid="invitation-row"]', { hasText: 'grace.admin@example.com' }).waitFor();
    await scrolledScreenshot(page, 'dashboard-teams.png', 'section[aria-labelledby="members-heading"]');
  });

  step(
    "the owner's audit log lists the team's writes with their actors, secrets redacted (screenshot)",
    async () => {
      const { page } = owner;
      await mainNav(page).getByRole('link', { name: 'Audit log' }).click();
      await page.locator('[data-testid="audit-entries"], [data-testid="audit-empty"]').first().waitFor();
      await page.getByLabel('Scope', { exact: true }).selectOption(flow.teamId);
      await page.waitForURL((url) => url.hash === `#/audit-log?team_id=${flow.teamId}`);
      const entry = (action: string) => page.locator(`[data-testid="audit-entry"][data-action="${action}"]`);
      // The personal log stays on screen (dimmed) until the team's arrives, and it has entries of its own
      // (the move of the personal endpoint into the team is an endpoint.updated there): wait for an entry
      // only the team's log has.
      await entry('team.created').waitFor();

      const actions: (string | null)[] = [];
      for (const row of await page.locator('[data-testid="audit-entry"]').all())
        actions.push(await row.getAttribute('data-action'));
      for (const action of [
        'team.created',
        'endpoint.created',
        'destination.created',
        'invitation.created',
        'invitation.accepted',
        'member.updated',
        'endpoint.updated',
      ]) {
        expect(actions).toContain(action);
      }
      // Newest first: the second invitation is the latest write.
      expect(actions[0]).toBe('invitation.created');
      // The latest endpoint update is the new member's rename.
      expect(await byTestId(entry('endpoint.updated').first(), 'audit-actor').textContent()).toBe(
        viewer.email,
      );
      expect(await byTestId(entry('member.updated'), 'audit-actor').textContent()).toBe(owner.email);

      const destination = entry('destination.created');
      await destination.locator('summary').click();
      const changes = (await byTestId(destination, 'audit-changes').textContent()) ?? '';
      expect(changes).toContain('"secret": "[redacted]"');
      expect(changes).not.toContain(DESTINATION_SECRET);
      await scrolledScreenshot(page, 'dashboard-audit.png', 'form[aria-label="Filter the audit log"]');

      // Narrowed to the endpoint: its writes only.
      await page.getByLabel('Endpoint', { exact: true }).selectOption(flow.endpointId);
      await page.waitForURL((url) => url.hash.includes(`endpoint_id=${flow.endpointId}`));
      await eventually(
        () => page.locator('[data-testid="audit-entry"][data-action="team.created"]').count(),
        (count) => count === 0,
      );
      await entry('destination.created').waitFor();
    },
  );

  step('fits a 390-pixel-wide phone screen: the team page and the audit log', async () => {
    const { page } = owner;
    await page.setViewportSize(PHONE);
    try {
      const auditPage = await horizontalOverflow(page);
      expect(auditPage.scrollWidth).toBeLessThanOrEqual(auditPage.innerWidth);
      await openTeamPage(page);
      const teamPage = await horizontalOverflow(page);
      expect(teamPage.scrollWidth).toBeLessThanOrEqual(teamPage.innerWidth);
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  step('no page had an error; the only failed request logged is the free plan’s 403', async () => {
    for (const person of [owner, viewer]) expect(person.watch.errors).toEqual([]);
    expect(viewer.watch.consoleErrors).toEqual([]);
    expect(owner.watch.consoleErrors).toEqual([expect.stringContaining('403')]);
  });

  /** A 1280×800 screenshot, the page scrolled so that `selector` starts at the top of the viewport. */
  async function scrolledScreenshot(page: Page, name: string, selector: string): Promise<void> {
    await screenshot(
      page,
      name,
      `((selector) => {
        const element = document.querySelector(selector);
        if (!element) return false;
        window.scrollBy(0, element.getBoundingClientRect().top - 16);
        return true;
      })(${JSON.stringify(selector)})`,
    );
  }
});
