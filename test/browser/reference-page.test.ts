import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../local/tools/chromium.js';
import { routes } from '../../shared/routes.js';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { chromiumPath, offlinePage, screenshot } from '../support/browser-available.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { axeViolations } from '../support/axe.js';

// The reference page at /docs in a real browser (Debian's Chromium through playwright-core), with no network but the
// local server: every operation renders from the document, and "Try it out" with a key calls the server and shows
// its answer; axe-core's WCAG 2.2 AA rules pass with every operation open and with an answer shown. UPDATE_SCREENSHOTS=1 writes the screenshot to docs/screenshots/ for the README.

const browserPath = chromiumPath('Reference page browser suite');

describe.skipIf(!browserPath)('the API reference page', () => {
  let api: TestApi;
  let browser: Browser;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    api = await startTestApi();
    await api.importEvents(shopEvents);
    token = (await api.createKey({ domains: ['shop.test'] })).token;
    browser = await launchChromium(browserPath!);
    page = await offlinePage(browser, api.url, { viewport: { width: 1280, height: 900 } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('renders every operation of the document, offline', async () => {
    await page.goto(`${api.url}/docs`);
    await page.locator('.opblock').first().waitFor();
    // Every route but the collector's CORS preflight, which is the browser's, not an operation a client calls.
    expect(await page.locator('.opblock').count()).toBe(Object.keys(routes).length - 1);
    for (const route of Object.values(routes)) {
      await expect(page.locator(`.opblock-summary-path[data-path="${route.path}"]`).first().isVisible()).resolves.toBe(
        true,
      );
    }
    await screenshot(page, 'reference.png');
  });

  it("meets WCAG 2.2 AA (axe-core's rules), with every operation open", async () => {
    const view = await offlinePage(browser, api.url, { viewport: { width: 1280, height: 900 } });
    await view.goto(`${api.url}/docs`);
    await view.locator('.opblock').first().waitFor();
    const found = (await axeViolations(view)).map((v) => `closed: ${v}`);
    for (const summary of await view.locator('.opblock-summary-control').all()) await summary.click();
    await view.locator('.opblock-body').first().waitFor();
    found.push(...(await axeViolations(view)).map((v) => `open: ${v}`));
    expect(found).toEqual([]);
    await view.close();
  });

  it('"Try it out" with a key calls the server and shows its answer', async () => {
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .click();
    await page.locator('.modal-ux input').first().fill(token);
    await page.locator('.modal-ux button.modal-btn.auth.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    const query = page.locator('#operations-Query-Query');
    await query.locator('.opblock-summary').click();
    const tryIt = query.getByRole('button', { name: 'Try it out' });
    if (await tryIt.isVisible()) await tryIt.click();
    await query
      .locator('textarea.body-param__text')
      .fill(JSON.stringify({ metrics: ['visitors', 'pageviews'], dimensions: ['page'], date_range: SHOP_RANGE }));
    await query.getByRole('button', { name: 'Execute' }).click();
    const status = query.locator('.live-responses-table tr.response .response-col_status').first();
    await status.waitFor();
    expect((await status.textContent())?.trim()).toBe('200');
    const shown = await query
      .locator('.live-responses-table tr.response .response-col_description pre')
      .first()
      .textContent();
    expect(JSON.parse(shown!).data.map((row: { dimensions: { page: string } }) => row.dimensions.page)).toContain(
      '/pricing',
    );
    // With an answer shown, the page still meets WCAG 2.2 AA.
    expect(await axeViolations(page)).toEqual([]);
  });
});
