import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { findChromium } from '../../local/tools/chromium.js';

/**
 * Debian's Chromium, or null when it is missing: the suite is then skipped with one line, unless
 * BROWSER_REQUIRED=1 (as `.ci/run` sets), which turns the skip into a failure.
 */
export function chromiumPath(suite: string): string | null {
  const found = findChromium();
  if ('path' in found) return found.path;
  if (process.env.BROWSER_REQUIRED === '1') throw new Error(`BROWSER_REQUIRED=1 but ${found.missing}`);
  console.info(`${suite} skipped: ${found.missing}`);
  return null;
}

/**
 * A page that reaches nothing but the server at `serverUrl`: any other request is aborted, so a page that loads
 * something from elsewhere fails its test instead of working only online.
 */
export async function offlinePage(
  browser: Browser,
  serverUrl: string,
  options: BrowserContextOptions = {},
): Promise<Page> {
  const page = await browser.newPage(options);
  await page.route(
    (url) => !url.href.startsWith(serverUrl),
    (route) => route.abort(),
  );
  return page;
}

/** Writes a screenshot: into docs/screenshots/ for the README with UPDATE_SCREENSHOTS=1, else into the temp folder. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  const dir =
    process.env.UPDATE_SCREENSHOTS === '1'
      ? new URL('../../docs/screenshots/', import.meta.url).pathname
      : join(tmpdir(), 'analytics-screenshots');
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name), ...options });
}
