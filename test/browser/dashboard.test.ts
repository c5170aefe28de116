import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DOMAIN, seedDemo } from '../../cli/demo-seed.js';
import { dashboardLink } from '../../local/server/dashboard-page.js';
import { launchChromium } from '../../local/tools/chromium.js';
import { formatMetric, type MetricName } from '../../dashboard/format.js';
import { chromiumPath, offlinePage, screenshot } from '../support/browser-available.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The dashboard at / in a real browser (Debian's Chromium through playwright-core) on `npm start`'s demo data, with no
// network but the local server. Each step is what a person does (the demo key offered, a range picked, a row
// clicked, an annotation added and deleted, a visitor opened, the keyboard instead of the mouse), and the numbers
// the page shows are compared with the API's own answers to the same questions. UPDATE_SCREENSHOTS=1 writes the
// screenshots of each view to docs/screenshots/ for the README.

const browserPath = chromiumPath('Dashboard browser suite');
const totals: MetricName[] = [
  'visitors',
  'pageviews',
  'bounce_rate',
  'avg_session_duration',
  'revenue',
  'conversion_rate',
];

describe.skipIf(!browserPath)('the dashboard', () => {
  let api: TestApi;
  let browser: Browser;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    api = await startTestApi();
    let printed = '';
    await seedDemo(api.paths, api.url, (text) => (printed += text));
    token = /(aqk_\S+)/.exec(printed)![1]!;
    browser = await launchChromium(browserPath!);
    page = await offlinePage(browser, api.url, { viewport: { width: 1280, height: 900 }, timezoneId: 'UTC' });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  /** The API's totals for a query body, formatted as the page formats them. */
  async function apiTotals(body: Record<string, unknown>): Promise<Record<string, string>> {
    const res = await api.request('POST', '/v1/query', {
      token,
      body: { domain: DEMO_DOMAIN, metrics: totals, include_revenue: true, timezone: 'UTC', ...body },
    });
    expect(res.status).toBe(200);
    const metrics = res.body.data[0].metrics as Record<MetricName, number>;
    return Object.fromEntries(totals.map((m) => [m, formatMetric(m, metrics[m])]));
  }

  async function shownTotals(): Promise<Record<string, string>> {
    const shown: Record<string, string> = {};
    for (const m of totals) shown[m] = (await page.locator(`.stat[data-metric=${m}] .value`).textContent())!;
    return shown;
  }

  /** Waits until the page shows `expected` (its answers arrive after the click), failing after 15 s. */
  async function expectTotals(expected: Record<string, string>) {
    await expect.poll(shownTotals, { timeout: 15_000 }).toEqual(expected);
  }

  const shoot = (name: string) => screenshot(page, name, { fullPage: true });

  it('opens on the demo data from the link npm start prints, and shows the totals the API gives for the last 30 days', async () => {
    await page.goto(dashboardLink(api.paths, api.url));
    // The key is kept in this browser and taken out of the address at once.
    await expect.poll(() => page.url()).toBe(`${api.url}/`);
    await expect.poll(() => page.locator('.top .site').textContent()).toBe(DEMO_DOMAIN);
    await expectTotals(await apiTotals({ date_range: '30d' }));
    await page.locator('.chart canvas').waitFor();
    // The top pages are the API's, in its order.
    const pages = await api.request('POST', '/v1/query', {
      token,
      body: { domain: DEMO_DOMAIN, dimensions: ['page'], date_range: '30d', limit: 10 },
    });
    await page.locator('section[aria-label=Pages] tbody tr').first().waitFor();
    expect(await page.locator('section[aria-label=Pages] tbody .row-filter').allTextContents()).toEqual(
      pages.body.data.map((r: any) => r.dimensions.page),
    );
    await shoot('dashboard.png');
  });

  it("changes the range: the totals become the API's for 7 days, and the comparison is against the 7 days before", async () => {
    await page.locator('select[name=range]').selectOption('7d');
    await expect.poll(() => page.url()).toContain('range=7d');
    const now = await apiTotals({ date_range: '7d' });
    await expectTotals(now);
    const resolved = (
      await api.request('POST', '/v1/query', { token, body: { domain: DEMO_DOMAIN, date_range: '7d' } })
    ).body.meta.date_range as [string, string];
    const before = new Date(Date.parse(`${resolved[0]}T00:00:00Z`) - 7 * 86_400_000).toISOString().slice(0, 10);
    const end = new Date(Date.parse(`${resolved[0]}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const previous = await apiTotals({ date_range: [before, end] });
    expect(await page.locator('.stat[data-metric=visitors] .delta').getAttribute('title')).toBe(
      `previous period: ${previous.visitors}`,
    );
  });

  it('adds a filter by clicking a row, and by the keyboard; the totals follow the API with those filters', async () => {
    await page.locator('section[aria-label=Pages] .row-filter', { hasText: /^\/pricing$/ }).click();
    await page.locator('.chip', { hasText: '/pricing' }).waitFor();
    await expectTotals(await apiTotals({ date_range: '7d', filters: [['page', 'is', '/pricing']] }));
    // Keyboard: focus the first device row and press Enter.
    const device = page.locator('section[aria-label=Devices] .row-filter').first();
    await device.waitFor();
    const name = (await device.textContent())!;
    await device.focus();
    await page.keyboard.press('Enter');
    await page.locator('.chip', { hasText: name }).waitFor();
    await expectTotals(
      await apiTotals({
        date_range: '7d',
        filters: [
          ['page', 'is', '/pricing'],
          ['device', 'is', name],
        ],
      }),
    );
    await shoot('dashboard-filtered.png');
    // Removing both chips brings back the unfiltered totals.
    for (let i = 0; i < 2; i++) await page.locator('.chip button').first().click();
    await expect.poll(() => page.locator('.chip').count()).toBe(0);
    await expectTotals(await apiTotals({ date_range: '7d' }));
  });

  it('adds an annotation on the chart and deletes it, through the API', async () => {
    await page.locator('.annotations summary').click();
    await page.getByLabel('Title').fill('Pricing page launched');
    await page.getByRole('button', { name: 'Add annotation' }).click();
    await page.locator('.annotations li', { hasText: 'Pricing page launched' }).waitFor();
    const listed = await api.request('GET', `/v1/annotations?domain=${DEMO_DOMAIN}`, { token });
    expect(listed.body.data.map((a: any) => a.title)).toEqual(['Pricing page launched']);
    await shoot('dashboard-annotation.png');
    await page.getByRole('button', { name: 'Delete annotation Pricing page launched' }).click();
    await expect.poll(() => page.locator('.annotations li').count()).toBe(0);
    expect((await api.request('GET', `/v1/annotations?domain=${DEMO_DOMAIN}`, { token })).body.data).toEqual([]);
  });

  it("lists the visitors of the range as the journeys list does, and opens one visitor's stats and timeline", async () => {
    await page.getByRole('link', { name: 'Journeys' }).click();
    const list = await api.request('POST', '/v1/journeys/list', {
      token,
      body: { domain: DEMO_DOMAIN, date_range: '7d', timezone: 'UTC', limit: 25 },
    });
    await page.locator('section[aria-label=Visitors] tbody tr').first().waitFor();
    expect(await page.locator('section[aria-label=Visitors] tbody .row-filter').allTextContents()).toEqual(
      list.body.data.map((v: any) => v.visitor_id),
    );
    expect(await page.locator('section[aria-label=Visitors] h2').textContent()).toContain(
      new Intl.NumberFormat('en-US').format(list.body.pagination.total),
    );
    await shoot('journeys.png');

    // The journeys conditions: more than 3 pageviews, with revenue.
    await page.getByLabel('Pageviews over').fill('3');
    await page.getByLabel('with revenue').check();
    const narrowed = await api.request('POST', '/v1/journeys/list', {
      token,
      body: { domain: DEMO_DOMAIN, date_range: '7d', timezone: 'UTC', limit: 25, pageviews_gt: 3, has_revenue: true },
    });
    await expect
      .poll(() => page.locator('section[aria-label=Visitors] tbody .row-filter').allTextContents(), { timeout: 15_000 })
      .toEqual(narrowed.body.data.map((v: any) => v.visitor_id));
    expect(narrowed.body.pagination.total).toBeLessThan(list.body.pagination.total);
    await page.getByLabel('Pageviews over').fill('');
    await page.getByLabel('with revenue').uncheck();
    await expect
      .poll(() => page.locator('section[aria-label=Visitors] tbody .row-filter').allTextContents(), { timeout: 15_000 })
      .toEqual(list.body.data.map((v: any) => v.visitor_id));

    const visitor = list.body.data[0].visitor_id as string;
    await page.locator('section[aria-label=Visitors] .row-filter', { hasText: visitor }).click();
    const stats = await api.request('POST', '/v1/journeys/stats', {
      token,
      body: { domain: DEMO_DOMAIN, visitor_id: visitor },
    });
    const timeline = await api.request('POST', '/v1/journeys/timeline', {
      token,
      body: { domain: DEMO_DOMAIN, visitor_id: visitor, date_range: '7d', timezone: 'UTC', limit: 200 },
    });
    await page.locator('.facts').waitFor();
    const fact = (name: string) => page.locator('.facts div', { hasText: name }).locator('dd').textContent();
    expect(await fact('Pageviews')).toBe(new Intl.NumberFormat('en-US').format(stats.body.data.total_pageviews));
    expect(await fact('First seen')).toBe(stats.body.data.first_seen);
    await page.locator('.timeline li').first().waitFor();
    expect(await page.locator('.timeline time').allTextContents()).toEqual(
      timeline.body.data.map((i: any) => i.timestamp),
    );
    await shoot('visitor.png');
    await page.getByRole('button', { name: '← All visitors' }).click();
    await page.locator('section[aria-label=Visitors]').waitFor();
  });

  it('reads on a phone: one column, nothing wider than the screen', async () => {
    const phone = await offlinePage(browser, api.url, {
      viewport: { width: 390, height: 844 },
      timezoneId: 'UTC',
      isMobile: true,
      hasTouch: true,
    });
    await phone.goto(`${api.url}/`);
    await phone.evaluate(
      (k) =>
        (globalThis as any).localStorage.setItem(
          'analytics-dashboard',
          JSON.stringify({ apiUrl: '', key: k, domain: 'demo.example.com' }),
        ),
      token,
    );
    await phone.goto(`${api.url}/#view=overview&range=30d&tz=UTC`);
    // A new hash is not a new page: reloaded, the page reads the key saved above.
    await phone.reload();
    await phone.locator('.stats[aria-busy=false]').waitFor();
    await phone.locator('section[aria-label=Pages] tbody tr').first().waitFor();
    expect(
      await phone.evaluate(() => (globalThis as any).document.documentElement.scrollWidth as number),
    ).toBeLessThanOrEqual(390);
    await screenshot(phone, 'dashboard-phone.png');
    await phone.close();
  });

  it('opens a working dashboard from any crafted link: filters the API would refuse are left out', async () => {
    const crafted = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await crafted.goto(`${api.url}/`);
    // A key of its own: the earlier tests' requests count against theirs (100 a minute).
    const own = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    await crafted.evaluate(
      (k) =>
        (globalThis as any).localStorage.setItem(
          'analytics-dashboard',
          JSON.stringify({ apiUrl: '', key: k, domain: 'demo.example.com' }),
        ),
      own,
    );
    for (const hash of [
      '#filters=[[1,2,3]]',
      '#filters=[null]',
      '#filters={"a":1}',
      '#filters=[["page","is",""]]&tz=Mars/Base&visitor=' + 'v'.repeat(300),
    ]) {
      await crafted.goto(`${api.url}/${hash}`);
      await crafted.reload();
      await expect.poll(() => crafted.locator('.top .site').textContent(), { message: hash }).toBe(DEMO_DOMAIN);
      await crafted.locator('.stat[data-metric=visitors] .value').waitFor();
      expect(await crafted.locator('.filters li.chip').count(), hash).toBe(0);
    }
    await crafted.close();
  });

  it('compares nothing where nothing is to compare: a range not yet begun, a range with no data in either period', async () => {
    for (const [range, title] of [
      ['2099-01-01,2099-01-31', 'the range has not begun: no data yet'],
      ['2020-01-01,2020-01-07', `previous period: ${formatMetric('visitors', 0)}`],
    ] as const) {
      // A page of its own with a key of its own (the earlier steps spent much of the demo key's minute), opened by a
      // link as npm start prints it, with the range added.
      const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
      const page = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
      await page.goto(`${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range }).toString()}`);
      await expect
        .poll(() => page.locator('.stat[data-metric=visitors] .value').textContent(), { message: range })
        .toBe('0');
      for (const m of totals) {
        const delta = page.locator(`.stat[data-metric=${m}] .delta`);
        await expect.poll(() => delta.textContent(), { message: `${range} ${m}` }).toBe('–');
        expect(await delta.getAttribute('class')).toBe('delta same');
      }
      expect(await page.locator('.stat[data-metric=visitors] .delta').getAttribute('title')).toBe(title);
      await page.close();
    }
  });

  it("asks for a key when none is offered, and shows the API's refusal of a wrong one", async () => {
    const fresh = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await fresh.goto(`${api.url}/`);
    await fresh.getByLabel('Site (domain)').fill(DEMO_DOMAIN);
    await fresh.getByLabel('API key').fill('aqk_wrong');
    await fresh.getByRole('button', { name: 'Open dashboard' }).click();
    await expect.poll(() => fresh.locator('[role=alert]').first().textContent()).toMatch(/key/i);
    await fresh.close();
  });
});
