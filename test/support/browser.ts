import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium package; `.ci/run` installs it when it is missing. No browser is ever downloaded. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches headless Chromium, or fails with a message that says how to get it (never skips). `executable`
 * is a script that starts CHROMIUM_PATH some other way (inside a network namespace, say).
 */
export async function launchChromium(executable = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM_PATH}, and it is not there. ` +
        'Install Debian\'s package ("apt-get update && apt-get install -y chromium"; .ci/run does this), ' +
        'or point CHROMIUM_PATH at a Chromium binary. No browser is downloaded.',
    );
  }
  return chromium.launch({ executablePath: executable, headless: true, args: CHROMIUM_ARGS });
}

export interface PageWatch {
  /** Full page loads (the `load` event) since the watch started; client-side navigation does not count. */
  loads(): number;
  /** Uncaught exceptions in the page. */
  errors: string[];
  /** console.error messages of the page. */
  consoleErrors: string[];
}

/** Records what a test wants to assert about a page afterwards: reloads and errors. */
export function watchPage(page: Page): PageWatch {
  let loads = 0;
  const watch: PageWatch = { loads: () => loads, errors: [], consoleErrors: [] };
  page.on('load', () => loads++);
  page.on('pageerror', (error) => watch.errors.push(error.stack ?? error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') watch.consoleErrors.push(message.text());
  });
  return watch;
}

/** Sets a marker on `window`; it survives everything but a reload (or a navigation to another document). */
export async function setReloadMarker(page: Page, value: number): Promise<void> {
  await page.evaluate(`window.__hooktrailMarker = ${JSON.stringify(value)}`);
}

export async function reloadMarker(page: Page): Promise<unknown> {
  return page.evaluate('window.__hooktrailMarker');
}

/** The page's scroll width and viewport width, to check that nothing overflows sideways. */
export async function horizontalOverflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate<{ scrollWidth: number; innerWidth: number }>(
    '({ scrollWidth: document.scrollingElement.scrollWidth, innerWidth: window.innerWidth })',
  );
}

/** Runs every close, even when an earlier one throws, then throws the first failure. */
export async function closeAll(closers: (() => unknown)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const close of closers) {
    try {
      await close();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}

/**
 * The steps of one story through the dashboard, each a test: once a step fails, the later ones fail at
 * once naming it (they would only fail for its sake), and a failure carries what `diagnose` adds (what
 * the pages said).
 */
export function storySteps(diagnose: (error: unknown) => unknown) {
  let failedStep: string | null = null;
  return (name: string, run: () => Promise<void>, timeoutMs = 30_000) =>
    it(
      name,
      async () => {
        if (failedStep) throw new Error(`not run: the earlier step "${failedStep}" failed`);
        try {
          await run();
        } catch (error) {
          failedStep = name;
          throw diagnose(error);
        }
      },
      timeoutMs,
    );
}

/**
 * Where screenshots go: the README's images in docs/ under `npm run screenshots` (`SCREENSHOTS=docs`);
 * otherwise nowhere, so that `npm test` leaves the tree as it found it (the picture is still taken and checked).
 */
const SCREENSHOT_DIR = process.env.SCREENSHOTS === 'docs' ? join(__dirname, '..', '..', 'docs') : undefined;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * A screenshot of the viewport, named `name`, taken after `scroll`: a browser-side expression (a string:
 * the tests' TypeScript has no DOM types) that scrolls the page and returns whether it found its target.
 */
export async function screenshot(page: Page, name: string, scroll: string): Promise<void> {
  expect(await page.evaluate<boolean>(scroll)).toBe(true);
  const path = SCREENSHOT_DIR && join(SCREENSHOT_DIR, name);
  const png = await page.screenshot({ path, fullPage: false, animations: 'disabled', caret: 'hide' });
  expect(png.subarray(0, PNG_SIGNATURE.length)).toEqual(PNG_SIGNATURE);
}
