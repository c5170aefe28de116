import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../local/tools/chromium.js';
import { axeViolations } from '../support/axe.js';
import { chromiumPath } from '../support/browser-available.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// A site with the tracker's script tag, served on this machine under its own host name (Chromium maps `shop.test` to
// loopback), visited in Chromium as a person would: a landing page from a newsletter link, a page changed through
// the History API, a custom event with properties, a payment. The events go through POST /api/event to the local
// store and are read back through /v1/query and in the dashboard. Then the same with Plausible's own published
// tracker (@plausible-analytics/tracker from the npm registry), pointed at this API.

const browserPath = chromiumPath('Collector browser suite');
const SITE = 'shop.test';
const PLAUSIBLE_SITE = 'plausible-shop.test';
const DNT_SITE = 'private-shop.test';
/** A browser set to send Do Not Track, as its settings would. */
const DO_NOT_TRACK = "Object.defineProperty(Navigator.prototype, 'doNotTrack', { get: () => '1' })";
const UA =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** DB-IP's lite database places this address in London, England. */
const LONDON = '81.2.69.142';

describe.skipIf(!browserPath)('collecting from a site', () => {
  let api: TestApi;
  let site: Server;
  let sitePort: number;
  let browser: Browser;
  let context: BrowserContext;
  let token: string;
  let plausibleBundle: string;

  beforeAll(async () => {
    // Each poll below asks seven questions with one key: more than the 100 a minute a key may ask.
    process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE = '2000';
    api = await startTestApi();
    token = (await api.createKey({ type: 'personal', domains: [SITE, PLAUSIBLE_SITE, DNT_SITE] })).token;
    plausibleBundle = await bundlePlausibleTracker();
    site = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      res.writeHead(200, { 'content-type': url.pathname.endsWith('.js') ? 'text/javascript' : 'text/html' });
      if (url.pathname === '/plausible-bundle.js') return res.end(plausibleBundle);
      res.end(url.pathname.startsWith('/plausible') ? plausiblePage() : ourPage(url.pathname === '/dnt'));
    });
    await new Promise<void>((done) => site.listen(0, '127.0.0.1', done));
    sitePort = (site.address() as AddressInfo).port;
    // Automation sets navigator.webdriver, which both scripts treat as a bot; a person's browser does not.
    browser = await launchChromium(browserPath!, [
      `--host-resolver-rules=MAP ${SITE} 127.0.0.1, MAP ${PLAUSIBLE_SITE} 127.0.0.1, MAP ${DNT_SITE} 127.0.0.1`,
      '--disable-blink-features=AutomationControlled',
    ]);
    context = await browser.newContext({ userAgent: UA, extraHTTPHeaders: { 'x-forwarded-for': LONDON } });
  }, 180_000);

  afterAll(async () => {
    delete process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
    await browser?.close();
    await new Promise((done) => site?.close(done));
    await api?.close();
  });

  const ourPage = (dnt = false) => `<!doctype html><html><head><title>Shop</title>
<script defer data-domain="${dnt ? DNT_SITE : SITE}" data-api="${api.url}/api/event" src="${api.url}/js/script.js"
  data-outbound-links data-file-downloads ${dnt ? 'data-respect-dnt' : ''}></script>
</head><body>
<a id="out" href="https://elsewhere.example/deal" onclick="event.preventDefault()">Partner</a>
<a id="file" href="/files/report.pdf" onclick="event.preventDefault()">Report</a>
<button id="next" onclick="history.pushState({}, '', '/pricing')">Pricing</button>
<button id="signup" onclick="plausible('Signup', { props: { plan: 'pro' } })">Sign up</button>
<button id="buy" onclick="plausible('Purchase', { revenue: { amount: '19.99', currency: 'EUR' } })">Buy</button>
</body></html>`;

  const plausiblePage = () => `<!doctype html><html><head><title>Shop</title>
<script src="/plausible-bundle.js"></script>
<script>PlausibleBundle.init({ domain: '${PLAUSIBLE_SITE}', endpoint: '${api.url}/api/event', outboundLinks: true });</script>
</head><body>
<button id="signup" onclick="PlausibleBundle.track('Signup', { props: { plan: 'team' } })">Sign up</button>
<button id="buy" onclick="PlausibleBundle.track('Purchase', { revenue: { amount: 5, currency: 'USD' } })">Buy</button>
</body></html>`;

  async function query(domain: string, body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    const res = await api.request('POST', '/v1/query', { token, body: { domain, date_range: '7d', ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data as { dimensions: object; metrics: object }[]).map((r) => ({ ...r.dimensions, ...r.metrics }));
  }

  /** Everything the visit below should have recorded, as the API answers it. */
  async function recorded(domain: string) {
    return {
      pages: await query(domain, {
        metrics: ['pageviews'],
        dimensions: ['page'],
        sort: { field: 'page', order: 'asc' },
      }),
      visitors: await query(domain, {
        metrics: ['visitors', 'visits'],
        dimensions: ['browser', 'os'],
      }),
      place: await query(domain, { metrics: ['visitors'], dimensions: ['country', 'city'] }),
      device: await query(domain, { metrics: ['visitors'], dimensions: ['device', 'referrer'] }),
      utm: await query(domain, { metrics: ['visitors'], dimensions: ['utm_source', 'utm_campaign'] }),
      events: await query(domain, { metrics: ['visitors'], dimensions: ['event'] }),
      revenue: await query(domain, { metrics: ['revenue'], include_revenue: true }),
    };
  }

  it('records pageviews, a history navigation, a custom event and a payment from our script', async () => {
    const page = await context.newPage();
    await page.goto(`http://${SITE}:${sitePort}/?utm_source=newsletter&utm_campaign=autumn`, {
      referer: 'https://news.example/issue-12',
    });
    await page.click('#next');
    expect(new URL(page.url()).pathname).toBe('/pricing');
    await page.click('#signup');
    await page.click('#buy');
    await page.click('#out');
    await page.click('#file');

    // Within 10 s of the last event, with nothing but the local sink's own schedule.
    await expect
      .poll(async () => (await query(SITE, { metrics: ['pageviews'] }))[0]?.pageviews, { timeout: 10_000 })
      .toBe(2);
    await expect.poll(async () => (await recorded(SITE)).revenue, { timeout: 10_000 }).toEqual([{ revenue: 1999 }]);
    expect(await recorded(SITE)).toEqual({
      pages: [
        { page: '/', pageviews: 1 },
        { page: '/pricing', pageviews: 1 },
      ],
      visitors: [{ browser: 'Chrome', os: 'macOS', visitors: 1, visits: 1 }],
      place: [{ country: 'GB', city: 'London', visitors: 1 }],
      device: [{ device: 'desktop', referrer: 'news.example', visitors: 1 }],
      utm: [{ utm_source: 'newsletter', utm_campaign: 'autumn', visitors: 1 }],
      events: [
        { event: 'File Download', visitors: 1 },
        { event: 'Outbound Link: Click', visitors: 1 },
        { event: 'Purchase', visitors: 1 },
        { event: 'Signup', visitors: 1 },
      ],
      revenue: [{ revenue: 1999 }],
    });
    const url = async (name: string) =>
      (
        await api.request('GET', `/v1/events/${encodeURIComponent(name)}/properties/url`, {
          token,
          query: { domain: SITE, period: '7d' },
        })
      ).body.data.map((v: { value: string }) => v.value);
    expect(await url('Outbound Link: Click')).toEqual(['https://elsewhere.example/deal']);
    expect(await url('File Download')).toEqual([`http://${SITE}:${sitePort}/files/report.pdf`]);
    const plan = await api.request('GET', '/v1/events/Signup/properties/plan', {
      token,
      query: { domain: SITE, period: '7d' },
    });
    expect(plan.body.data).toEqual([expect.objectContaining({ value: 'pro' })]);
    await page.close();
  });

  it('shows them in the dashboard, and the script tag and a working check on "Add your site"', async () => {
    const page = await context.newPage();
    await page.goto(`${api.url}/#${new URLSearchParams({ key: token, domain: SITE })}`);
    const sources = page.getByRole('region', { name: 'Sources' });
    await expect
      .poll(() => sources.getByRole('row').allInnerTexts(), { timeout: 15_000 })
      .toContainEqual(expect.stringContaining('news.example'));
    const pages = page.getByRole('region', { name: 'Pages' });
    await expect.poll(() => pages.innerText(), { timeout: 15_000 }).toContain('/pricing');

    await page.getByRole('link', { name: 'Add your site' }).click();
    const tag = await page.getByLabel('Script tag').inputValue();
    expect(await axeViolations(page)).toEqual([]);
    expect(tag).toBe(
      `<script defer data-domain="${SITE}" data-api="${api.url}/api/event" src="${api.url}/js/script.js"></script>`,
    );
    await page.getByLabel(/outbound/i).check();
    expect(await page.getByLabel('Script tag').inputValue()).toContain(' data-outbound-links ');
    await page.getByRole('button', { name: 'Check installation' }).click();
    await expect
      .poll(() => page.getByText(/pageviews in the last 30 minutes/).innerText(), { timeout: 15_000 })
      .toMatch(/^2 pageviews in the last 30 minutes/);
    await page.close();
  });

  it('sends nothing from a browser that asks not to be tracked, when the site says data-respect-dnt', async () => {
    const page = await context.newPage();
    await page.addInitScript(DO_NOT_TRACK);
    await page.goto(`http://${DNT_SITE}:${sitePort}/dnt`);
    await page.click('#signup');
    // The same page without the attribute is counted (below): so nothing arriving here is the attribute's doing.
    const counted = await context.newPage();
    await counted.addInitScript(DO_NOT_TRACK);
    await counted.goto(`http://${SITE}:${sitePort}/dnt-ignored`);
    await expect
      .poll(async () => (await query(SITE, { metrics: ['pageviews'], filters: [['page', 'is', '/dnt-ignored']] }))[0], {
        timeout: 10_000,
      })
      .toEqual({ pageviews: 1 });
    await api.collected.flush();
    expect(await query(DNT_SITE, { metrics: ['pageviews'] })).toEqual([{ pageviews: 0 }]);
    await page.close();
    await counted.close();
  });

  it("takes Plausible's own published tracker unchanged", async () => {
    const page = await context.newPage();
    await page.goto(`http://${PLAUSIBLE_SITE}:${sitePort}/plausible?utm_source=ads`, {
      referer: 'https://search.example/q',
    });
    await page.click('#signup');
    await page.click('#buy');
    await expect
      .poll(async () => (await recorded(PLAUSIBLE_SITE)).revenue, { timeout: 10_000 })
      .toEqual([{ revenue: 500 }]);
    const seen = await recorded(PLAUSIBLE_SITE);
    expect(seen.pages).toEqual([{ page: '/plausible', pageviews: 1 }]);
    expect(seen.visitors).toEqual([{ browser: 'Chrome', os: 'macOS', visitors: 1, visits: 1 }]);
    expect(seen.place).toEqual([{ country: 'GB', city: 'London', visitors: 1 }]);
    expect(seen.device).toEqual([{ device: 'desktop', referrer: 'search.example', visitors: 1 }]);
    expect(seen.events).toEqual([
      { event: 'Purchase', visitors: 1 },
      { event: 'Signup', visitors: 1 },
    ]);
    await page.close();
  });
});

/** Plausible's npm package is an ES module: bundled into a global for a plain page, as a site's build would. */
async function bundlePlausibleTracker(): Promise<string> {
  const result = await build({
    stdin: {
      contents: "export { init, track } from '@plausible-analytics/tracker';",
      resolveDir: fileURLToPath(new URL('../../', import.meta.url)),
    },
    bundle: true,
    format: 'iife',
    globalName: 'PlausibleBundle',
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
