import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DOMAIN, seedDemo } from '../../cli/demo-seed.js';
import { dashboardLink } from '../../local/server/dashboard-page.js';
import { launchChromium } from '../../local/tools/chromium.js';
import { formatCount, formatMetric, type MetricName } from '../../dashboard/format.js';
import { chromiumPath, offlinePage, screenshot } from '../support/browser-available.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { axeViolations } from '../support/axe.js';
import Papa from 'papaparse';
import { unzipSync, strFromU8 } from 'fflate';
import { readFileSync } from 'node:fs';

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
  async function apiTotals(body: Record<string, unknown>, key = token): Promise<Record<string, string>> {
    const res = await api.request('POST', '/v1/query', {
      token: key,
      body: { domain: DEMO_DOMAIN, metrics: totals, include_revenue: true, timezone: 'UTC', ...body },
    });
    expect(res.status).toBe(200);
    const metrics = res.body.data[0].metrics as Record<MetricName, number>;
    return Object.fromEntries(totals.map((m) => [m, formatMetric(m, metrics[m])]));
  }

  async function shownTotals(view: Page = page): Promise<Record<string, string>> {
    const shown: Record<string, string> = {};
    for (const m of totals) shown[m] = (await view.locator(`.stat[data-metric=${m}] .value`).textContent())!;
    return shown;
  }

  /** Waits until `view` shows `expected` (its answers arrive after the click), failing after 15 s. */
  async function expectTotals(expected: Record<string, string>, view: Page = page) {
    await expect.poll(() => shownTotals(view), { timeout: 15_000 }).toEqual(expected);
  }

  const shoot = (name: string) => screenshot(page, name, { fullPage: true });

  /**
   * Moves the shared page (and the test's own API calls) to a new key of the demo site, keeping the view: an
   * overview is a dozen requests, and one key's 100 a minute would run out over the tests that share the page.
   */
  async function freshKey(): Promise<void> {
    token = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = new URLSearchParams(new URL(page.url()).hash.slice(1));
    view.set('key', token);
    view.set('domain', DEMO_DOMAIN);
    await page.goto(`${api.url}/#${view.toString()}`);
    await expect.poll(() => page.url()).not.toContain('key=');
  }

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
    await freshKey();
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
    // Keyboard: focus the first browser row (the Devices card's first tab) and press Enter.
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
          ['browser', 'is', name],
        ],
      }),
    );
    await shoot('dashboard-filtered.png');
    // Removing both chips brings back the unfiltered totals.
    for (let i = 0; i < 2; i++) await page.locator('.chip button').first().click();
    await expect.poll(() => page.locator('.chip').count()).toBe(0);
    await expectTotals(await apiTotals({ date_range: '7d' }));
  });

  it("has Plausible's tabs on every card; entry and exit pages count entrances and exits as the API does, and filter", async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '30d', tz: 'UTC' }).toString()}`,
    );
    const card = (title: string) => view.locator(`section[aria-label="${title}"]`);
    const tabs = async (title: string) => card(title).getByRole('tab').allTextContents();
    await card('Pages').locator('tbody tr').first().waitFor();
    expect(await tabs('Sources')).toEqual(['Referrers', 'Source', 'Medium', 'Campaign', 'Content', 'Term']);
    expect(await tabs('Pages')).toEqual(['Top pages', 'Entry pages', 'Exit pages']);
    expect(await tabs('Locations')).toEqual(['Countries', 'Regions', 'Cities']);
    expect(await tabs('Devices')).toEqual(['Browsers', 'OS', 'Size']);

    /** The card's rows as shown, and the API's for the same dimension and metrics, formatted alike. */
    const shown = async (title: string) =>
      Promise.all(
        (await card(title).locator('tbody tr').all()).map(async (row) => [
          (await row.locator('.row-filter').textContent())!,
          ...(await row.locator('td.number').allTextContents()),
        ]),
      );
    const expected = async (dimension: string, second: string) => {
      const res = await api.request('POST', '/v1/query', {
        token: key,
        body: {
          domain: DEMO_DOMAIN,
          date_range: '30d',
          metrics: ['visitors', second],
          dimensions: [dimension],
          limit: 10,
        },
      });
      expect(res.status).toBe(200);
      return res.body.data.map((r: any) => [
        r.dimensions[dimension],
        formatCount(r.metrics.visitors),
        formatCount(r.metrics[second]),
      ]);
    };

    // The keyboard moves along the tabs (WAI-ARIA tabs): Entry pages, with entrances (sessions) as its column.
    await card('Pages').getByRole('tab', { name: 'Top pages' }).focus();
    await view.keyboard.press('ArrowRight');
    await expect.poll(() => card('Pages').getByRole('tab', { selected: true }).textContent()).toBe('Entry pages');
    const entries = await expected('entry_page', 'visits');
    expect(entries.length).toBeGreaterThan(1);
    // Entrances differ from pageviews on the same pages: a card showing top pages' numbers would not pass.
    expect(entries).not.toEqual(await expected('page', 'pageviews'));
    await expect.poll(() => shown('Pages')).toEqual(entries);
    expect(await card('Pages').locator('thead th').allTextContents()).toEqual(['Entry pages', 'Visitors', 'Entrances']);
    await card('Pages').getByRole('tab', { name: 'Exit pages' }).click();
    await expect.poll(() => shown('Pages')).toEqual(await expected('exit_page', 'visits'));
    expect(await card('Pages').locator('thead th').allTextContents()).toEqual(['Exit pages', 'Visitors', 'Exits']);
    await card('Locations').getByRole('tab', { name: 'Regions' }).click();
    await expect.poll(() => shown('Locations')).toEqual(await expected('region', 'pageviews'));
    await card('Sources').getByRole('tab', { name: 'Source' }).click();
    await expect.poll(() => shown('Sources')).toEqual(await expected('utm_source', 'pageviews'));

    // A card keeps its tab in this browser, as Plausible's does.
    await view.reload();
    await expect.poll(() => card('Pages').getByRole('tab', { selected: true }).textContent()).toBe('Exit pages');

    // Clicking an exit page filters the view by it (an extension of the query's filters): the totals are the API's.
    const exit = card('Pages').locator('.row-filter').first();
    await exit.waitFor();
    const name = (await exit.textContent())!;
    await exit.click();
    await view.locator('.chip', { hasText: name }).waitFor();
    expect(view.url()).toContain(encodeURIComponent(JSON.stringify([['exit_page', 'is', name]])));
    const filtered = await apiTotals({ date_range: '30d', filters: [['exit_page', 'is', name]] }, key);
    const viewTotals = async () => {
      const got: Record<string, string> = {};
      for (const m of totals) got[m] = (await view.locator(`.stat[data-metric=${m}] .value`).textContent())!;
      return got;
    };
    await expect.poll(viewTotals, { timeout: 15_000 }).toEqual(filtered);
    expect(filtered).not.toEqual(await apiTotals({ date_range: '30d' }, key));
    await view.close();
  });

  it("opens a card's full list: search, sort by any column, pages of 100, as CSV; the whole view as a ZIP of CSVs", async () => {
    // A site of 250 pages (page n has n % 7 + 1 visitors), one with a UTM source a spreadsheet would run as a formula.
    const site = 'lists.test';
    const at = new Date(Date.now() - 86_400_000).toISOString();
    const events = Array.from({ length: 250 }, (_, n) =>
      Array.from({ length: (n % 7) + 1 }, (_, v) => ({
        domain: site,
        timestamp: at,
        type: 'pageview',
        visitor_id: `v${n}-${v}`,
        session_id: `s${n}-${v}`,
        url_path: `/p/${String(n).padStart(3, '0')}`,
        utm_source: n === 0 ? '=HYPERLINK("http://evil.example")' : 'news',
      })),
    ).flat();
    expect((await api.importEvents(events)).rejected).toEqual([]);
    const key = (await api.createKey({ domains: [site] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(`${api.url}/#${new URLSearchParams({ key, domain: site, range: '7d', tz: 'UTC' }).toString()}`);
    const ask = async (body: Record<string, unknown>) => {
      const res = await api.request('POST', '/v1/query', {
        token: key,
        body: {
          domain: site,
          date_range: '7d',
          timezone: 'UTC',
          metrics: ['visitors', 'pageviews'],
          dimensions: ['page'],
          ...body,
        },
      });
      expect(res.status).toBe(200);
      return res.body as { data: any[]; pagination: { has_more: boolean } };
    };
    const asShown = (rows: any[]) =>
      rows.map((r) => [r.dimensions.page, formatCount(r.metrics.visitors), formatCount(r.metrics.pageviews)]);

    await view.locator('section[aria-label=Pages] tbody tr').first().waitFor();
    await view.locator('section[aria-label=Pages] .details').click();
    const dialog = view.getByRole('dialog', { name: 'Top pages' });
    const shown = async () =>
      Promise.all(
        (await dialog.locator('tbody tr').all()).map(async (row) => [
          (await row.locator('.row-filter').textContent())!,
          ...(await row.locator('td.number').allTextContents()),
        ]),
      );
    const first = await ask({ limit: 100, sort: { field: 'visitors', order: 'desc' } });
    expect(first.pagination.has_more).toBe(true);
    await expect.poll(shown, { timeout: 15_000 }).toEqual(asShown(first.data));
    await screenshot(view, 'full-list.png');
    await dialog.getByRole('button', { name: 'Next' }).click();
    await expect
      .poll(shown)
      .toEqual(asShown((await ask({ limit: 100, offset: 100, sort: { field: 'visitors', order: 'desc' } })).data));

    // Sorting by the name column (the sort-by-dimension extension), then the other way; back to the first page.
    await dialog.getByRole('button', { name: 'Top pages' }).click();
    await expect
      .poll(shown, { timeout: 15_000 })
      .toEqual(asShown((await ask({ limit: 100, sort: { field: 'page', order: 'asc' } })).data));
    expect(await dialog.locator('th[aria-sort]').getAttribute('aria-sort')).toBe('ascending');
    await dialog.getByRole('button', { name: 'Top pages' }).click();
    const byName = await ask({ limit: 100, sort: { field: 'page', order: 'desc' } });
    expect(byName.data[0].dimensions.page).toBe('/p/249');
    await expect.poll(shown, { timeout: 15_000 }).toEqual(asShown(byName.data));
    await dialog.getByRole('button', { name: 'Pageviews' }).click();
    await expect
      .poll(shown)
      .toEqual(asShown((await ask({ limit: 100, sort: { field: 'pageviews', order: 'desc' } })).data));

    // Search: the API's `contains` on the list's field, in the order chosen.
    await dialog.getByRole('searchbox').fill('1');
    const found = await ask({
      limit: 100,
      filters: [['page', 'contains', '1']],
      sort: { field: 'pageviews', order: 'desc' },
    });
    expect(found.data.length).toBe(100);
    await expect.poll(shown, { timeout: 15_000 }).toEqual(asShown(found.data));

    // The CSV holds every matching row (more than one page), in the same order.
    const [csvFile] = await Promise.all([
      view.waitForEvent('download'),
      dialog.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    expect(csvFile.suggestedFilename()).toBe(`${site}-7d-page.csv`);
    const csv = Papa.parse<string[]>(readFileSync((await csvFile.path())!, 'utf8').trim()).data;
    const every = await ask({
      limit: 1000,
      filters: [['page', 'contains', '1']],
      sort: { field: 'pageviews', order: 'desc' },
    });
    expect(every.data.length).toBe(133);
    expect(csv).toEqual([
      ['page', 'visitors', 'pageviews'],
      ...every.data.map((r: any) => [r.dimensions.page, String(r.metrics.visitors), String(r.metrics.pageviews)]),
    ]);
    await view.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);

    // The view as a ZIP: the series, every tab of every card, custom events; cells run as formulas are defused.
    const [zipFile] = await Promise.all([
      view.waitForEvent('download'),
      view.getByRole('button', { name: 'Export CSVs (ZIP)' }).click(),
    ]);
    const files = unzipSync(readFileSync((await zipFile.path())!));
    expect(Object.keys(files).sort()).toEqual(
      [
        'README.txt',
        'visitors.csv',
        'custom_events.csv',
        'sources.csv',
        'utm_source.csv',
        'utm_medium.csv',
        'utm_campaign.csv',
        'utm_content.csv',
        'utm_term.csv',
        'pages.csv',
        'entry_pages.csv',
        'exit_pages.csv',
        'countries.csv',
        'regions.csv',
        'cities.csv',
        'browsers.csv',
        'operating_systems.csv',
        'devices.csv',
      ].sort(),
    );
    const pagesCsv = Papa.parse<string[]>(strFromU8(files['pages.csv']!).trim()).data;
    expect(pagesCsv).toHaveLength(251);
    const allPages = await ask({ limit: 1000 });
    expect(pagesCsv.slice(1)).toEqual(
      allPages.data.map((r: any) => [r.dimensions.page, String(r.metrics.visitors), String(r.metrics.pageviews)]),
    );
    expect(strFromU8(files['utm_source.csv']!)).toContain(`"'=HYPERLINK(""http://evil.example"")",1,1`);
    const series = Papa.parse<string[]>(strFromU8(files['visitors.csv']!).trim()).data;
    expect(series[0]).toEqual(['date', 'visitors', 'pageviews', 'visits', 'bounce_rate', 'visit_duration']);
    expect(series.slice(1).reduce((sum, r) => sum + Number(r[2]), 0)).toBe(events.length);
    await view.close();
  });

  it('counts goals (events, pages, page prefixes) as the query endpoint does, adds and removes them, and filters', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    const filters = [['device', 'is', 'desktop']];
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '30d', tz: 'UTC', filters: JSON.stringify(filters) }).toString()}`,
    );
    const goals = view.locator('section[aria-label=Goals]');
    await goals.getByText('No goals yet').waitFor();
    const addGoal = async (kind: 'event' | 'page', value: string) => {
      await goals.locator('select[name=goal-kind]').selectOption(kind);
      await goals.locator('input[name=goal-value]').fill(value);
      await goals.getByRole('button', { name: 'Add goal' }).click();
      // Added once the form is empty again (a person waits for the row too).
      await expect.poll(() => goals.locator('input[name=goal-value]').inputValue()).toBe('');
    };
    await addGoal('event', 'signup');
    await addGoal('page', '/pricing');
    await addGoal('page', '/blog*');
    await addGoal('event', 'no-such-event');
    const ask = async (body: Record<string, unknown>) => {
      const res = await api.request('POST', '/v1/query', {
        token: key,
        body: { domain: DEMO_DOMAIN, date_range: '30d', timezone: 'UTC', metrics: ['visitors'], ...body },
      });
      expect(res.status).toBe(200);
      return res.body.data as any[];
    };
    const visitors = (await ask({ filters }))[0].metrics.visitors as number;
    const signup = (await ask({ dimensions: ['event'], filters })).find((r) => r.dimensions.event === 'signup')!.metrics
      .visitors as number;
    const pricing = (await ask({ filters: [...filters, ['page', 'is', '/pricing']] }))[0].metrics.visitors as number;
    const blog = (await ask({ filters: [...filters, ['page', 'starts_with', '/blog']] }))[0].metrics.visitors as number;
    expect(Math.min(signup, pricing, blog)).toBeGreaterThan(0);
    const row = (uniques: number) => [
      formatCount(uniques),
      formatMetric('conversion_rate', (uniques / visitors) * 100),
    ];
    const shown = async () =>
      Promise.all(
        (await goals.locator('tbody tr').all()).map(async (r) => [
          (await r.locator('.row-filter').textContent())!,
          ...(await r.locator('td.number').allTextContents()),
        ]),
      );
    await expect.poll(shown).toEqual([
      ['signup', ...row(signup)],
      ['Visit /pricing', ...row(pricing)],
      ['Visit /blog*', ...row(blog)],
      ['no-such-event', ...row(0)],
    ]);
    // The same goal twice: the API's 409, said in the card.
    await goals.locator('select[name=goal-kind]').selectOption('event');
    await goals.locator('input[name=goal-value]').fill('signup');
    await goals.getByRole('button', { name: 'Add goal' }).click();
    await expect.poll(() => goals.locator('[role=alert]').textContent()).toBe('The domain already has this goal');
    // Removing one; it is gone from the API too.
    await goals.getByRole('button', { name: 'Remove goal no-such-event' }).click();
    await expect.poll(async () => (await shown()).length).toBe(3);
    const stored = await api.request('GET', '/v1/goals', { token: key, query: { domain: DEMO_DOMAIN } });
    expect(stored.body.data.map((g: any) => g.event_name ?? g.page_path)).toEqual(['signup', '/pricing', '/blog*']);
    // A click on a prefix goal keeps its visitors.
    await goals.locator('.row-filter', { hasText: 'Visit /blog*' }).click();
    await view.locator('.chip', { hasText: '/blog' }).waitFor();
    expect(view.url()).toContain(encodeURIComponent(JSON.stringify(['page', 'starts_with', '/blog'])));
    for (const goal of stored.body.data)
      await api.request('DELETE', `/v1/goals/${goal.id}`, { token: key, query: { domain: DEMO_DOMAIN } });
    await view.close();
  });

  it('adds a filter with the editor (values suggested from the data), and keeps filters as named segments', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '30d', tz: 'UTC' }).toString()}`,
    );
    await view.getByRole('button', { name: 'Add filter' }).click();
    const editor = view.getByRole('dialog', { name: 'Add a filter' });
    await editor.locator('select[name=filter-field]').selectOption('browser');
    await editor.locator('input[name=filter-value]').fill('r');
    // The suggestions are the API's browsers containing what is typed, in its order.
    const browsers = await api.request('POST', '/v1/query', {
      token: key,
      body: {
        domain: DEMO_DOMAIN,
        date_range: '30d',
        timezone: 'UTC',
        metrics: ['visitors'],
        dimensions: ['browser'],
        filters: [['browser', 'contains', 'r']],
        limit: 20,
      },
    });
    const expected = browsers.body.data.map((r: any) => r.dimensions.browser);
    expect(expected.length).toBeGreaterThan(1);
    await expect
      .poll(
        () =>
          editor
            .locator('#filter-values option')
            .evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value)),
        { timeout: 15_000 },
      )
      .toEqual(expected);
    await editor.locator('select[name=filter-operator]').selectOption('is_not');
    await editor.locator('input[name=filter-value]').fill('Chrome');
    await editor.getByRole('button', { name: 'Add filter' }).click();
    await view.locator('.chip', { hasText: 'Chrome' }).waitFor();
    const value = (metric: string) => view.locator(`.stat[data-metric=${metric}] .value`).textContent();
    const notChrome = await apiTotals({ date_range: '30d', filters: [['browser', 'is_not', 'Chrome']] }, key);
    await expect.poll(() => value('visitors'), { timeout: 15_000 }).toBe(notChrome.visitors);

    // A value the API would refuse is said in the editor, and nothing is added.
    await view.getByRole('button', { name: 'Add filter' }).click();
    await editor.locator('select[name=filter-field]').selectOption('event_property');
    await editor.locator('input[name=filter-value]').fill('no-key');
    await editor.getByRole('button', { name: 'Add filter' }).click();
    await expect
      .poll(() => editor.locator('[role=alert]').textContent(), { timeout: 15_000 })
      .toBe('Value must have the form key:value');
    await editor.getByRole('button', { name: 'Cancel' }).click();
    expect(await view.locator('.chip').count()).toBe(1);

    // Saved as a segment, applied again after the filters were removed and the page reloaded.
    await view.getByRole('button', { name: 'Save as segment' }).click();
    await view.locator('input[name=segment-name]').fill('Not Chrome');
    await view.getByRole('button', { name: 'Save segment' }).click();
    await expect.poll(() => view.locator('select[name=segment]').inputValue(), { timeout: 15_000 }).toBe('Not Chrome');
    await view.locator('.chip button').click();
    await expect.poll(() => view.locator('.chip').count(), { timeout: 15_000 }).toBe(0);
    await view.reload();
    await view.locator('select[name=segment]').selectOption('Not Chrome');
    await view.locator('.chip', { hasText: 'Chrome' }).waitFor();
    expect(view.url()).toContain(encodeURIComponent(JSON.stringify([['browser', 'is_not', 'Chrome']])));
    await expect.poll(() => value('visitors'), { timeout: 15_000 }).toBe(notChrome.visitors);
    await view.getByRole('button', { name: 'Delete segment Not Chrome' }).click();
    await expect.poll(() => view.locator('select[name=segment]').count()).toBe(0);
    await view.close();
  });

  it('shares a view read-only by a link with a key of its own, and stops it when revoked', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const owner = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    const filters = [['country', 'is', 'US']];
    await owner.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: 'UTC', filters: JSON.stringify(filters) }).toString()}`,
    );
    await owner.getByRole('button', { name: 'Share' }).click();
    const dialog = owner.getByRole('dialog', { name: 'Share this view' });
    await dialog.locator('input[name=link-name]').fill('Board');
    await dialog.getByRole('button', { name: 'Create link' }).click();
    const link = await dialog.locator('input[name=shared-link]').inputValue();
    const shared = new URLSearchParams(new URL(link).hash.slice(1));
    expect(shared.get('share')).toMatch(/\S+/);
    expect(shared.get('share')).not.toBe(key);
    expect(link).not.toContain(key);
    expect(shared.get('range')).toBe('7d');
    expect(shared.get('filters')).toBe(JSON.stringify(filters));
    await dialog.locator('.links li', { hasText: 'Board' }).waitFor();

    // Another browser opens it: the view, read-only, with the totals the API gives for it.
    const viewer = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await viewer.goto(link);
    await expect.poll(() => viewer.locator('.top .site').textContent()).toContain('shared read-only');
    expect(viewer.url()).not.toContain('share=');
    const expected = await apiTotals({ date_range: '7d', filters }, key);
    await expect.poll(() => viewer.locator('.stat[data-metric=visitors] .value').textContent()).toBe(expected.visitors);
    await viewer.locator('section[aria-label=Goals]').waitFor();
    for (const writer of ['Share', 'Add annotation', 'Add goal']) {
      expect(await viewer.getByRole('button', { name: writer }).count(), writer).toBe(0);
    }

    // Revoked by its owner: the link reads nothing any more.
    await dialog.getByRole('button', { name: 'Revoke Board' }).click();
    await expect.poll(() => dialog.locator('.links li').count()).toBe(0);
    await viewer.reload();
    await expect.poll(() => viewer.locator('[role=alert]').first().textContent()).toMatch(/revoked/i);
    await viewer.close();
    await owner.close();
  });

  it('draws the countries of the view on a world map, shaded by visitors, and filters by a click on one', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '30d', tz: 'UTC' }).toString()}`,
    );
    const map = view.locator('section[aria-label=Locations] svg.world-map');
    await map.locator('path.visited').first().waitFor();
    const countries = await api.request('POST', '/v1/query', {
      token: key,
      body: { domain: DEMO_DOMAIN, date_range: '30d', metrics: ['visitors'], dimensions: ['country'], limit: 300 },
    });
    const byCountry = new Map<string, number>(
      countries.body.data.map((r: any) => [r.dimensions.country, r.metrics.visitors]),
    );
    const drawn = await map.locator('path').evaluateAll((ps) => ps.map((p) => p.getAttribute('data-country')!));
    // Natural Earth's 110m outlines hold every country the demo's visitors come from.
    expect(drawn.length).toBeGreaterThan(150);
    const shaded = await map
      .locator('path.visited')
      .evaluateAll((ps) => ps.map((p) => p.getAttribute('data-country')!));
    expect(shaded.sort()).toEqual([...byCountry.keys()].filter((c) => drawn.includes(c)).sort());
    expect(shaded.length).toBeGreaterThan(5);
    expect(await map.locator('path[data-country=US] title').textContent()).toBe(
      `US: ${formatCount(byCountry.get('US')!)} visitors`,
    );
    // The most visited country is the darkest.
    const opacity = (code: string) =>
      map
        .locator(`path[data-country=${code}]`)
        .evaluate((p) => Number((globalThis as any).getComputedStyle(p).fillOpacity));
    const [first, last] = [countries.body.data[0].dimensions.country, countries.body.data.at(-1).dimensions.country];
    expect(await opacity(first)).toBe(1);
    expect(await opacity(last)).toBeLessThan(await opacity(first));
    await map.locator('path[data-country=DE]').click();
    await view.locator('.chip', { hasText: 'DE' }).waitFor();
    expect(view.url()).toContain(encodeURIComponent(JSON.stringify([['country', 'is', 'DE']])));
    await view.close();
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
    await freshKey();
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
    // The page says what it counts; the API shows it: the visitors with a pageview are the overview's visitors.
    expect(await page.locator('section[aria-label=Visitors] .counted').textContent()).toMatch(
      /a pageview, a custom event or a payment.*Visitors counts those with a pageview/,
    );
    const own = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const scope = { domain: DEMO_DOMAIN, date_range: '7d', timezone: 'UTC' };
    const withPageviews = await api.request('POST', '/v1/journeys/list', {
      token: own,
      body: { ...scope, limit: 1, pageviews_gt: 0 },
    });
    const overview = await api.request('POST', '/v1/query', { token: own, body: { ...scope, metrics: ['visitors'] } });
    expect(withPageviews.body.pagination.total).toBe(overview.body.data[0].metrics.visitors);
    expect(withPageviews.body.pagination.total).toBeLessThan(list.body.pagination.total);

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

  it("shows a visitor's page in the view's time zone: first seen, activity and timeline alike", async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const timezone = 'Asia/Kolkata';
    const list = await api.request('POST', '/v1/journeys/list', {
      token: key,
      body: { domain: DEMO_DOMAIN, date_range: '7d', timezone, limit: 1 },
    });
    const visitor = list.body.data[0].visitor_id as string;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, view: 'journeys', range: '7d', tz: timezone, visitor }).toString()}`,
    );
    const stats = await api.request('POST', '/v1/journeys/stats', {
      token: key,
      body: { domain: DEMO_DOMAIN, visitor_id: visitor, timezone },
    });
    const utc = await api.request('POST', '/v1/journeys/stats', {
      token: key,
      body: { domain: DEMO_DOMAIN, visitor_id: visitor },
    });
    expect(stats.body.data.first_seen).not.toBe(utc.body.data.first_seen);
    const fact = (name: string) => view.locator('.facts div', { hasText: name }).locator('dd').textContent();
    await expect.poll(() => fact('First seen'), { timeout: 15_000 }).toBe(stats.body.data.first_seen);
    expect(await fact('Last seen')).toBe(stats.body.data.last_seen);
    expect(await view.locator('section[aria-label^="Activity"] h3').textContent()).toBe(
      `Activity by weekday and hour (${timezone})`,
    );
    const timeline = await api.request('POST', '/v1/journeys/timeline', {
      token: key,
      body: { domain: DEMO_DOMAIN, visitor_id: visitor, date_range: '7d', timezone, limit: 200 },
    });
    await view.locator('.timeline li').first().waitFor();
    expect(await view.locator('.timeline time').allTextContents()).toEqual(
      timeline.body.data.map((i: any) => i.timestamp),
    );
    await view.close();
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
      // A key of its own: the earlier tests' requests count against the demo key's 100 a minute.
      (await api.createKey({ domains: [DEMO_DOMAIN] })).token,
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
    // The visitors list: each id on one line, and every number column on the screen.
    await phone.goto(`${api.url}/#view=journeys&range=30d&tz=UTC`);
    await phone.reload();
    const first = phone.locator('section[aria-label=Visitors] tbody tr').first();
    await first.waitFor();
    const id = await first.locator('.visitor-id').boundingBox();
    const fontSize = await first
      .locator('.visitor-id')
      .evaluate((e) => parseFloat((globalThis as any).getComputedStyle(e).fontSize));
    // One line of text and the button's padding; two lines would be over 2.4 font sizes.
    expect(id!.height).toBeLessThan(2.2 * fontSize);
    for (const cell of await first.locator('td.number').all()) {
      const box = await cell.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    }
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

  it("counts custom events with the view's filters and time zone, as the query endpoint's event dimension does", async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const filters = [['device', 'is', 'mobile']];
    const timezone = 'America/New_York';
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: timezone, filters: JSON.stringify(filters) }).toString()}`,
    );
    const body = { domain: DEMO_DOMAIN, date_range: '7d', timezone, filters };
    const events = await api.request('POST', '/v1/query', {
      token: key,
      body: { ...body, metrics: ['visitors'], dimensions: ['event'], limit: 10 },
    });
    const total = await api.request('POST', '/v1/query', { token: key, body: { ...body, metrics: ['visitors'] } });
    const visitors = total.body.data[0].metrics.visitors as number;
    const expected = events.body.data.map((r: any) => [
      r.dimensions.event,
      formatCount(r.metrics.visitors),
      formatMetric('conversion_rate', (r.metrics.visitors / visitors) * 100),
    ]);
    expect(expected.length).toBeGreaterThan(1);
    // The unfiltered UTC list differs: a card reading it would not pass.
    const unfiltered = await api.request('POST', '/v1/query', {
      token: key,
      body: { domain: DEMO_DOMAIN, date_range: '7d', metrics: ['visitors'], dimensions: ['event'], limit: 10 },
    });
    expect(unfiltered.body.data.map((r: any) => formatCount(r.metrics.visitors))).not.toEqual(
      expected.map((r: string[]) => r[1]),
    );
    const rows = view.locator('section[aria-label="Custom events"] tbody tr');
    await expect
      .poll(async () =>
        (await rows.all()).length === 0
          ? []
          : Promise.all(
              (await rows.all()).map(async (row) => [
                (await row.locator('.row-filter').textContent())!,
                ...(await row.locator('td.number').allTextContents()),
              ]),
            ),
      )
      .toEqual(expected);
    await view.close();
  });

  it('draws the day not over yet as its own dashed series, and a past range without it', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    const legend = () => view.locator('.chart .u-legend .u-label').allTextContents();
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: 'UTC' }).toString()}`,
    );
    await expect
      .poll(legend, { timeout: 15_000 })
      .toEqual([
        'Time',
        'Visitors',
        'Pageviews',
        'Visitors, previous period',
        'Visitors today so far',
        'Pageviews today so far',
      ]);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
    await view.goto(`${api.url}/#${new URLSearchParams({ range: `${weekAgo},${yesterday}`, tz: 'UTC' }).toString()}`);
    await view.reload();
    await expect
      .poll(legend, { timeout: 15_000 })
      .toEqual(['Time', 'Visitors', 'Pageviews', 'Visitors, previous period']);
    await view.close();
  });

  it('sets annotation titles on nearby days apart, at 7 days and at 12 months, never over each other', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const created: string[] = [];
    for (const daysAgo of [1, 2, 3, 4, 5]) {
      const date = new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
      const res = await api.request('POST', '/v1/annotations', {
        token: key,
        body: { domain: DEMO_DOMAIN, date, title: `Release ${daysAgo} with a long description of what changed` },
      });
      expect(res.status).toBe(201);
      created.push(res.body.id);
    }
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    for (const range of ['7d', '12mo']) {
      await view.goto(`${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range, tz: 'UTC' }).toString()}`);
      await view.reload();
      const labels = view.locator('.chart .mark-label');
      await expect.poll(() => labels.count(), { message: range, timeout: 15_000 }).toBeGreaterThan(0);
      // The chart draws again as the view's other answers arrive: boxes of one drawing, read once it has settled.
      let boxes: Awaited<ReturnType<(typeof labels)['boundingBox']>>[] = [];
      await expect
        .poll(
          async () => {
            boxes = await Promise.all((await labels.all()).map((l) => l.boundingBox()));
            return boxes.every((box) => box !== null);
          },
          { message: range, timeout: 15_000 },
        )
        .toBe(true);
      for (const [i, a] of boxes.entries())
        for (const b of boxes.slice(i + 1))
          expect(
            a!.x + a!.width <= b!.x || b!.x + b!.width <= a!.x || a!.y + a!.height <= b!.y || b!.y + b!.height <= a!.y,
            `${range}: ${JSON.stringify([a, b])}`,
          ).toBe(true);
      for (const text of await labels.allTextContents()) expect(text, range).toMatch(/^Release \d with a long/);
    }
    for (const id of created)
      await api.request('DELETE', `/v1/annotations/${id}`, { token: key, query: { domain: DEMO_DOMAIN } });
    await view.close();
  });

  it("asks a view's cards in a few batches (POST /v1/query/batch), and shows the API's numbers", async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    const asked: { path: string; queries: number }[] = [];
    view.on('request', (request) => {
      const path = new URL(request.url()).pathname;
      if (path !== '/v1/query' && path !== '/v1/query/batch') return;
      const body = request.postDataJSON() as { queries?: unknown[] };
      asked.push({ path, queries: body.queries?.length ?? 1 });
    });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: 'UTC' }).toString()}`,
    );
    const expected = await apiTotals({ date_range: '7d' }, key);
    await expectTotals(expected, view);
    // Every card has answered.
    await expect.poll(() => view.locator('[aria-busy=true]').count()).toBe(0);
    await expect.poll(() => view.locator('.lists').getByText('Loading…').count()).toBe(0);
    const queries = asked.reduce((n, a) => n + a.queries, 0);
    const batches = asked.filter((a) => a.path === '/v1/query/batch');
    console.info(`dashboard load: ${queries} queries in ${asked.length} requests, ${batches.length} of them batches`);
    expect(batches.length).toBeGreaterThan(0);
    // Fewer requests than queries; a query of up to 1,000 rows (the chart, the goals) fills a batch of its own.
    expect(asked.length).toBeLessThan(queries);
    await view.close();
  });

  it('asks the queries of a batch out of time (504) again one by one, and shows their answers', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    let refused = 0;
    await view.route('**/v1/query/batch', (route) => {
      refused += 1;
      return route.fulfill({
        status: 504,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'query_timeout', message: 'The query ran out of time' }),
      });
    });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: 'UTC' }).toString()}`,
    );
    const expected = await apiTotals({ date_range: '7d' }, key);
    await expectTotals(expected, view);
    await expect.poll(() => view.locator('.lists').getByText('Loading…').count()).toBe(0);
    expect(refused).toBeGreaterThan(0);
    expect(await view.locator('.lists').getByText('Not loaded.').count()).toBe(0);
    expect(await view.locator('[role=alert]').count()).toBe(0);
    await view.close();
  });

  it('says a refusal once for the whole view, with a retry that asks every card again', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    // Every query refused as the rate limit refuses it, until the retry.
    const refusal = { error: 'rate_limited', message: 'Too many requests: at most 100 a minute per key' };
    // Every query: asked alone or in a batch (dashboard/query-batches.ts).
    const queries = /\/v1\/query(\/batch)?$/;
    await view.route(queries, (route) =>
      route.fulfill({
        status: 429,
        contentType: 'application/json',
        headers: { 'Retry-After': '7' },
        body: JSON.stringify(refusal),
      }),
    );
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: 'UTC' }).toString()}`,
    );
    const alerts = view.locator('[role=alert]');
    await expect.poll(() => alerts.allTextContents()).toEqual([`${refusal.message} (retry in 7 s)Retry`]);
    await expect.poll(() => view.locator('section[aria-label=Pages]').textContent()).toContain('Not loaded.');
    expect(await view.locator('.stat[data-metric=visitors] .value').textContent()).toBe('–');
    // Still one message once every card has failed.
    await expect.poll(() => view.locator('.lists').getByText('Not loaded.').count()).toBe(4);
    expect(await alerts.count()).toBe(1);
    await view.unroute(queries);
    await view.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => alerts.count()).toBe(0);
    const expected = await apiTotals({ date_range: '7d' }, key);
    await expectTotals(expected, view);
    await view.locator('section[aria-label=Pages] tbody tr').first().waitFor();
    await view.close();
  });

  it('opens the dashboard when the key link is opened in a tab already showing the connect form', async () => {
    const tab = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await tab.goto(`${api.url}/`);
    await tab.getByRole('button', { name: 'Open dashboard' }).waitFor();
    // The link npm start prints once the demo key exists: the same page, another fragment.
    await tab.goto(dashboardLink(api.paths, api.url));
    await expect.poll(() => tab.locator('.top .site').textContent(), { timeout: 15_000 }).toBe(DEMO_DOMAIN);
    await tab.locator('.stat[data-metric=visitors] .value').waitFor();
    expect(tab.url()).toBe(`${api.url}/`);
    await tab.close();
  });

  it("meets WCAG 2.2 AA (axe-core's rules) on every view, on a desktop and on a phone", async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const found: string[] = [];
    for (const viewport of [
      { width: 1280, height: 900 },
      { width: 390, height: 844 },
    ]) {
      const view = await offlinePage(browser, api.url, { viewport, timezoneId: 'UTC' });
      const check = async (name: string) =>
        found.push(...(await axeViolations(view)).map((v) => `${viewport.width}px ${name}: ${v}`));
      await view.goto(`${api.url}/`);
      await view.getByRole('button', { name: 'Open dashboard' }).waitFor();
      await check('connect');
      await view.goto(
        `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '30d', tz: 'UTC' }).toString()}`,
      );
      await view.locator('section[aria-label="Custom events"] tbody tr').first().waitFor();
      await view.locator('.chart canvas').waitFor();
      await view.locator('section[aria-label="Custom events"] button.link').first().click();
      await view.locator('.properties select').waitFor();
      await view.locator('.annotations summary').click();
      await check('overview');
      await view.locator('section[aria-label=Pages] .details').click();
      await view.getByRole('dialog').locator('tbody tr').first().waitFor();
      await check('full list');
      await view.keyboard.press('Escape');
      await view.getByRole('button', { name: 'Add filter' }).click();
      await view.getByRole('dialog', { name: 'Add a filter' }).waitFor();
      await check('filter editor');
      await view.keyboard.press('Escape');
      await view.getByRole('button', { name: 'Share' }).click();
      await view.getByRole('dialog', { name: 'Share this view' }).locator('.muted').last().waitFor();
      await check('share');
      await view.keyboard.press('Escape');
      await view.getByRole('link', { name: 'Journeys' }).click();
      await view.locator('section[aria-label=Visitors] tbody tr').first().waitFor();
      await check('journeys');
      await view.locator('section[aria-label=Visitors] .row-filter').first().click();
      await view.locator('.timeline li').first().waitFor();
      await view.locator('.facts').waitFor();
      await check('visitor');
      await view.close();
    }
    expect(found).toEqual([]);
  });

  it('compares with the previous period or the same period a year before: on the cards and as a second line', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '7d', tz: 'UTC' }).toString()}`,
    );
    const resolved = (
      await api.request('POST', '/v1/query', { token: key, body: { domain: DEMO_DOMAIN, date_range: '7d' } })
    ).body.meta.date_range as [string, string];
    const legend = () => view.locator('.chart .u-legend .u-label').allTextContents();
    const column = async () => {
      await view.locator('.chart-table summary').click();
      const cells = await view.locator('.chart-table tbody tr td:nth-child(4)').allTextContents();
      await view.locator('.chart-table summary').click();
      return cells;
    };
    /** The API's visitors per day of `period`, in order, as the table shows them. */
    const daily = async (period: [string, string]) => {
      const res = await api.request('POST', '/v1/query', {
        token: key,
        body: {
          domain: DEMO_DOMAIN,
          date_range: period,
          timezone: 'UTC',
          metrics: ['visitors'],
          dimensions: ['date'],
          limit: 1000,
        },
      });
      const byDate = new Map(res.body.data.map((r: any) => [r.dimensions.date, r.metrics.visitors as number]));
      const days: string[] = [];
      for (let ms = Date.parse(`${period[0]}T00:00:00Z`); ms <= Date.parse(`${period[1]}T00:00:00Z`); ms += 86_400_000)
        days.push(formatCount((byDate.get(new Date(ms).toISOString().slice(0, 10)) as number | undefined) ?? 0));
      return days;
    };
    await expect.poll(legend, { timeout: 15_000 }).toContain('Visitors, previous period');
    const day = 86_400_000;
    const previous: [string, string] = [
      new Date(Date.parse(`${resolved[0]}T00:00:00Z`) - 7 * day).toISOString().slice(0, 10),
      new Date(Date.parse(`${resolved[0]}T00:00:00Z`) - day).toISOString().slice(0, 10),
    ];
    expect(await column()).toEqual(await daily(previous));
    await view.locator('select[name=compare]').selectOption('year');
    await expect.poll(() => view.url()).toContain('compare=year');
    await expect.poll(legend, { timeout: 15_000 }).toContain('Visitors, a year before');
    const yearAgo = resolved.map((d) => `${Number(d.slice(0, 4)) - 1}${d.slice(4)}`) as [string, string];
    const before = await api.request('POST', '/v1/query', {
      token: key,
      body: { domain: DEMO_DOMAIN, date_range: yearAgo, timezone: 'UTC', metrics: ['visitors'] },
    });
    await expect
      .poll(() => view.locator('.stat[data-metric=visitors] .delta').getAttribute('title'), { timeout: 15_000 })
      .toBe(`a year before: ${formatMetric('visitors', before.body.data[0].metrics.visitors)}`);
    expect(await column()).toEqual(await daily(yearAgo));
    await view.close();
  });

  it('shows today by the hour, up to the hour now, with the totals of today', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: 'today', tz: 'UTC' }).toString()}`,
    );
    const today = new Date().toISOString().slice(0, 10);
    const hourNow = new Date().toISOString().slice(11, 13);
    const own = (body: Record<string, unknown>) =>
      api.request('POST', '/v1/query', {
        token: key,
        body: { domain: DEMO_DOMAIN, date_range: [today, today], timezone: 'UTC', ...body },
      });
    const totalsToday = (await own({ metrics: ['visitors'] })).body.data[0].metrics.visitors as number;
    await expect
      .poll(() => view.locator('.stat[data-metric=visitors] .value').textContent(), { timeout: 15_000 })
      .toBe(formatMetric('visitors', totalsToday));
    expect(await view.locator('select[name=range]').inputValue()).toBe('today');
    const hours = (await own({ metrics: ['visitors'], dimensions: ['hour'], limit: 100 })).body.data as any[];
    const byHour = new Map(hours.map((r) => [r.dimensions.hour, r.metrics.visitors as number]));
    const expected = Array.from({ length: Number(hourNow) + 1 }, (_, h) => {
      const at = `${today} ${String(h).padStart(2, '0')}:00:00`;
      return [at, formatCount(byHour.get(at) ?? 0)];
    });
    await view.locator('.chart canvas').waitFor();
    await view.locator('.chart-table summary').click();
    const rows = await Promise.all(
      (await view.locator('.chart-table tbody tr').all()).map(async (row) => [
        (await row.locator('time').textContent())!,
        (await row.locator('td.number').first().textContent())!,
      ]),
    );
    expect(rows).toEqual(expected);
    expect(await view.locator('.chart').getAttribute('aria-label')).toBe(
      `Visitors and pageviews per hour, ${expected.length} hours`,
    );
    await view.close();
  });

  it('draws weeks and months as the API counts them: a visitor of several days is one visitor of the week', async () => {
    const key = (await api.createKey({ domains: [DEMO_DOMAIN] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: DEMO_DOMAIN, range: '90d', tz: 'UTC' }).toString()}`,
    );
    await view.locator('.chart canvas').waitFor();
    const ask = async (dimension: string) => {
      const res = await api.request('POST', '/v1/query', {
        token: key,
        body: {
          domain: DEMO_DOMAIN,
          date_range: '90d',
          timezone: 'UTC',
          metrics: ['visitors', 'pageviews'],
          dimensions: [dimension],
          limit: 1000,
        },
      });
      expect(res.status).toBe(200);
      return res.body.data.map((r: any) => [
        r.dimensions[dimension],
        formatCount(r.metrics.visitors),
        formatCount(r.metrics.pageviews),
      ]);
    };
    const table = async () => {
      if (!(await view.locator('.chart-table').getAttribute('open')))
        await view.locator('.chart-table summary').click();
      return Promise.all(
        (await view.locator('.chart-table tbody tr').all()).map(async (row) => [
          (await row.locator('time').textContent())!,
          ...(await row.locator('td.number').allTextContents()).slice(0, 2),
        ]),
      );
    };
    const days = await ask('date');
    for (const [interval, dimension, word] of [
      ['week', 'week', 'weeks'],
      ['month', 'month', 'months'],
    ] as const) {
      await view.locator('select[name=interval]').selectOption(interval);
      await expect.poll(() => view.url()).toContain(`interval=${interval}`);
      const periods = await ask(dimension);
      await expect.poll(table).toEqual(periods);
      expect(await view.locator('.chart').getAttribute('aria-label')).toBe(
        `Visitors and pageviews per ${interval}, ${periods.length} ${word}`,
      );
      // Visitors of a period are not the sum of its days' visitors (returning visitors), pageviews are.
      const sum = (rows: string[][], column: number) =>
        rows.reduce((n, r) => n + Number(r[column]!.replace(/,/g, '')), 0);
      expect(sum(periods, 2)).toBe(sum(days, 2));
      expect(sum(periods, 1)).toBeLessThan(sum(days, 1));
    }
    await view.close();
  });

  it('shows the last 30 minutes by the minute (realtime), and asks again every minute', async () => {
    const site = 'live-dashboard.test';
    const now = Date.now();
    const pageview = (visitor: string, minutesAgo: number) => ({
      domain: site,
      timestamp: new Date(now - minutesAgo * 60_000).toISOString(),
      type: 'pageview',
      visitor_id: visitor,
      session_id: `s-${visitor}`,
      url_path: `/${visitor}`,
    });
    expect((await api.importEvents([pageview('v1', 3), pageview('v2', 12), pageview('v3', 50)])).rejected).toEqual([]);
    const key = (await api.createKey({ domains: [site] })).token;
    const view = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    // The page's clock runs on, but its timers wait for fastForward: a minute passes when the test says so.
    await view.clock.install({ time: new Date(now) });
    await view.goto(
      `${api.url}/#${new URLSearchParams({ key, domain: site, range: 'realtime', tz: 'UTC' }).toString()}`,
    );
    const value = (metric: string) => view.locator(`.stat[data-metric=${metric}] .value`).textContent();
    await expect.poll(() => value('visitors')).toBe('2');
    expect(await value('pageviews')).toBe('2');
    expect(await view.locator('.stat[data-metric=visitors] .delta').textContent()).toBe('last 30 minutes');
    await view.locator('.chart canvas').waitFor();
    expect(await view.locator('.chart').getAttribute('aria-label')).toBe(
      'Visitors and pageviews per minute, 30 minutes',
    );
    await view.locator('.chart-table summary').click();
    const minute = (minutesAgo: number) => {
      const at = new Date(now - minutesAgo * 60_000).toISOString();
      return `${at.slice(0, 10)} ${at.slice(11, 16)}:00`;
    };
    const rows = await Promise.all(
      (await view.locator('.chart-table tbody tr').all()).map(async (row) => [
        (await row.locator('time').textContent())!,
        (await row.locator('td.number').first().textContent())!,
      ]),
    );
    expect(rows).toHaveLength(30);
    expect(rows.at(-1)![0]).toBe(minute(0));
    expect(rows.filter((r) => r[1] !== '0')).toEqual([
      [minute(12), '1'],
      [minute(3), '1'],
    ]);
    await expect
      .poll(() => view.locator('section[aria-label=Pages] .row-filter').allTextContents())
      .toEqual(['/v1', '/v2']);

    // A visitor arrives; a minute later the view asks again and shows them.
    expect((await api.importEvents([pageview('v4', 0)])).rejected).toEqual([]);
    await view.clock.fastForward(60_000);
    await expect.poll(() => value('visitors')).toBe('3');
    await expect
      .poll(() => view.locator('section[aria-label=Pages] .row-filter').allTextContents())
      .toEqual(['/v1', '/v2', '/v4']);
    await view.close();
  });

  it("asks for a key when none is offered, and shows the API's refusal of a wrong one", async () => {
    const fresh = await offlinePage(browser, api.url, { timezoneId: 'UTC' });
    await fresh.goto(`${api.url}/`);
    await fresh.getByLabel('Site (domain)').fill(DEMO_DOMAIN);
    // The placeholder shows how keys begin.
    expect(await fresh.getByLabel('API key').getAttribute('placeholder')).toBe(`${token.slice(0, 4)}…`);
    await fresh.getByLabel('API key').fill('aqk_wrong');
    await fresh.getByRole('button', { name: 'Open dashboard' }).click();
    await expect.poll(() => fresh.locator('[role=alert]').first().textContent()).toMatch(/key/i);
    await fresh.close();
  });
});
