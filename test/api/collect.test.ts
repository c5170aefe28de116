import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectEvent, forgetServedDomains } from '../../shared/services/collect.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { daySalt } from '../../shared/collect/visitors.js';
import { tableNames } from '../../shared/config.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { sweepExpiredCounters } from '../../local/server/expired-items.js';
import { expectNoInternals } from '../support/http-assertions.js';
import { queryParquet, sqlPath } from '../support/parquet-rows.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// POST /api/event end to end (docs/COLLECTING.md): Plausible's body through the real HTTP server into dynalite (the
// day's salt, sessions, the address's rate limit) and the local batch sink, imported by the one importer and read
// back through /v1/query. Every expected value below is worked out by hand from what the requests send.

const SITE = 'collect.test';
const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
/** An address DB-IP's lite database places in London, England; and one in Mountain View, California. */
const LONDON = '81.2.69.142';
const MOUNTAIN_VIEW = '8.8.8.8';

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  token = (await api.createKey({ domains: [SITE] })).token;
  await api.createKey({ domains: ['second.collect.test'] });
});

afterAll(async () => {
  await api?.close();
});

async function send(
  body: unknown,
  options: { ua?: string; from?: string; raw?: string; contentType?: string } = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${api.url}/api/event`, {
    method: 'POST',
    headers: {
      'content-type': options.contentType ?? 'text/plain',
      'user-agent': options.ua ?? CHROME_WINDOWS,
      ...(options.from ? { 'x-forwarded-for': options.from } : {}),
    },
    body: options.raw ?? JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

async function query(body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  const res = await api.request('POST', '/v1/query', {
    token,
    body: { domain: SITE, date_range: '7d', ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data as { dimensions: object; metrics: object }[]).map((r) => ({ ...r.dimensions, ...r.metrics }));
}

/** Every row of the site's event files: the store's own view, to prove what was (not) written. */
async function storedRows(domain = SITE): Promise<Record<string, unknown>[]> {
  await api.collected.flush();
  const dir = join(api.paths.currentLink, 'events', `domain=${domain}`);
  if (!existsSync(dir)) return [];
  return queryParquet(`SELECT * FROM read_parquet(${sqlPath(`${dir}/*/*.parquet`)}) ORDER BY ts`);
}

describe('POST /api/event', () => {
  it('records a visit of two pageviews as one session with the first page’s source, geo and platform', async () => {
    const first = await send(
      {
        n: 'pageview',
        u: `https://${SITE}/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=launch`,
        d: SITE,
        r: 'https://www.news.example/story',
      },
      { from: LONDON },
    );
    expect(first.status).toBe(202);
    expect(first.text).toBe('');
    expect(first.headers.get('access-control-allow-origin')).toBe('*');
    // The next page: the referrer is the site itself and the URL has no tags; the session keeps its source.
    expect(
      (
        await send(
          { name: 'pageview', url: `https://${SITE}/signup`, domain: SITE, referrer: `https://${SITE}/pricing` },
          { from: LONDON },
        )
      ).status,
    ).toBe(202);

    // Visible to queries within 10 s, without anything but the sink's own schedule.
    await expect
      .poll(async () => (await query({ metrics: ['pageviews'] }))[0]?.pageviews, { timeout: 10_000, interval: 250 })
      .toBe(2);
    const rows = await storedRows();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      type: 'pageview',
      url_path: '/pricing',
      referrer: 'https://www.news.example/story',
      referrer_domain: 'news.example',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'launch',
      country: 'GB',
      region: 'England',
      city: 'London',
      browser: 'Chrome',
      os: 'Windows',
      device: 'desktop',
      is_dev: false,
    });
    expect(rows[1]).toMatchObject({
      url_path: '/signup',
      referrer: 'https://www.news.example/story',
      utm_source: 'newsletter',
    });
    expect(rows[1]!.session_id).toBe(rows[0]!.session_id);
    expect(rows[1]!.visitor_id).toBe(rows[0]!.visitor_id);
    expect(
      await query({ metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate'], dimensions: ['referrer'] }),
    ).toEqual([{ referrer: 'news.example', visitors: 1, visits: 1, pageviews: 2, bounce_rate: 0 }]);
  });

  it('counts another browser at the same address as another visitor, placed and parsed from its own request', async () => {
    expect(
      (await send({ n: 'pageview', u: `https://${SITE}/`, d: SITE }, { ua: SAFARI_IPHONE, from: MOUNTAIN_VIEW }))
        .status,
    ).toBe(202);
    await api.collected.flush();
    const byBrowser = await query({
      metrics: ['visitors'],
      dimensions: ['browser', 'country'],
      sort: { field: 'browser', order: 'asc' },
    });
    expect(byBrowser).toEqual([
      { browser: 'Chrome', country: 'GB', visitors: 1 },
      { browser: 'Safari', country: 'US', visitors: 1 },
    ]);
    const iphone = (await storedRows()).find((r) => r.browser === 'Safari')!;
    expect(iphone).toMatchObject({
      os: 'iOS',
      device: 'mobile',
      region: 'California',
      city: 'Mountain View',
      url_path: '/',
    });
  });

  it('records custom events with properties, and revenue as the event and its payment', async () => {
    const from = '1.1.1.1';
    expect((await send({ n: 'pageview', u: `https://${SITE}/cart`, d: SITE }, { from })).status).toBe(202);
    expect(
      (
        await send(
          {
            n: 'Signup',
            u: `https://${SITE}/cart`,
            d: SITE,
            p: { plan: 'pro', seats: 3, trial: true, empty: '', gone: null, list: [1] },
          },
          { from },
        )
      ).status,
    ).toBe(202);
    expect(
      (
        await send(
          {
            name: 'Purchase',
            url: `https://${SITE}/cart`,
            domain: SITE,
            revenue: { amount: '10.295', currency: 'EUR' },
          },
          { from },
        )
      ).status,
    ).toBe(202);
    const rows = (await storedRows()).filter((r) => r.country === 'AU');
    expect(rows.map((r) => r.type)).toEqual(['pageview', 'event', 'event', 'revenue']);
    expect(new Set(rows.map((r) => r.session_id)).size).toBe(1);
    expect(rows[1]).toMatchObject({ event_name: 'Signup', url_path: '/cart' });
    // Plausible drops empty, null, list and object values; numbers and booleans are kept as their text.
    expect(JSON.parse(String(rows[1]!.event_properties))).toEqual({ plan: 'pro', seats: '3', trial: 'true' });
    expect(rows[3]).toMatchObject({ revenue_event: 'Purchase', currency: 'EUR', amount_cents: '1030' });

    const props = await api.request('GET', `/v1/events/Signup/properties/plan`, {
      token,
      query: { domain: SITE, period: '7d' },
    });
    expect(props.status, JSON.stringify(props.body)).toBe(200);
    expect(props.body.data).toEqual([expect.objectContaining({ value: 'pro', count: 1 })]);
    expect(await query({ metrics: ['revenue'], include_revenue: true, filters: [['country', 'is', 'AU']] })).toEqual([
      { revenue: 1030 },
    ]);
  });

  it('records one event for each site a body names, each with its own visitor id', async () => {
    const from = '185.199.108.153';
    expect(
      (await send({ n: 'pageview', u: `https://${SITE}/both`, d: `${SITE}, second.collect.test` }, { from })).status,
    ).toBe(202);
    const here = (await storedRows()).filter((r) => r.url_path === '/both');
    const there = (await storedRows('second.collect.test')).filter((r) => r.url_path === '/both');
    expect(here).toHaveLength(1);
    expect(there).toHaveLength(1);
    expect(here[0]!.visitor_id).not.toBe(there[0]!.visitor_id);
  });

  it('answers bots and engagement events 202 and stores nothing for them', async () => {
    const before = (await storedRows()).length;
    const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    expect((await send({ n: 'pageview', u: `https://${SITE}/bot`, d: SITE }, { ua: googlebot })).status).toBe(202);
    expect((await send({ n: 'pageview', u: `https://${SITE}/bot`, d: SITE }, { ua: '' })).status).toBe(202);
    expect((await send({ n: 'engagement', u: `https://${SITE}/bot`, d: SITE, sd: 80, e: 1200 })).status).toBe(202);
    expect((await storedRows()).length).toBe(before);
  });

  it('marks pages served from localhost as dev traffic', async () => {
    expect((await send({ n: 'pageview', u: 'http://localhost:5173/dev-page', d: SITE })).status).toBe(202);
    const row = (await storedRows()).find((r) => r.url_path === '/dev-page')!;
    expect(row.is_dev).toBe(true);
    expect(await query({ metrics: ['pageviews'], filters: [['page', 'is', '/dev-page']] })).toEqual([{ pageviews: 0 }]);
  });

  it('refuses hostile and wrong bodies with a 4xx naming what is accepted, and stores none of them', async () => {
    const before = (await storedRows()).length;
    const cases: [string, { raw?: string; body?: unknown }, number, string][] = [
      ['not JSON', { raw: '{"n": "pageview",' }, 400, 'invalid_request'],
      ['an array', { raw: '[1,2]' }, 400, 'invalid_request'],
      ['empty', { raw: '' }, 400, 'invalid_request'],
      ['no name', { body: { u: `https://${SITE}/`, d: SITE } }, 400, 'invalid_request'],
      ['no url', { body: { n: 'pageview', d: SITE } }, 400, 'invalid_request'],
      ['a relative url', { body: { n: 'pageview', u: '/pricing', d: SITE } }, 400, 'invalid_request'],
      ['a data: url', { body: { n: 'pageview', u: 'data:text/html,hi', d: SITE } }, 400, 'invalid_request'],
      ['a number as name', { body: { n: 5, u: `https://${SITE}/`, d: SITE } }, 400, 'invalid_request'],
      ['a name over 120', { body: { n: 'x'.repeat(121), u: `https://${SITE}/`, d: SITE } }, 400, 'invalid_request'],
      [
        'a url over 2000',
        { body: { n: 'pageview', u: `https://${SITE}/${'a'.repeat(2000)}`, d: SITE } },
        400,
        'invalid_request',
      ],
      [
        '31 properties',
        {
          body: {
            n: 'Signup',
            u: `https://${SITE}/`,
            d: SITE,
            p: Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`k${i}`, 'v'])),
          },
        },
        400,
        'invalid_request',
      ],
      [
        'a property value over 2000',
        { body: { n: 'Signup', u: `https://${SITE}/`, d: SITE, p: { k: 'v'.repeat(2001) } } },
        400,
        'invalid_request',
      ],
      [
        'a property key with a colon',
        { body: { n: 'Signup', u: `https://${SITE}/`, d: SITE, p: { 'a:b': 'v' } } },
        400,
        'invalid_request',
      ],
      [
        '__proto__ as a property key',
        { raw: `{"n":"Signup","u":"https://${SITE}/","d":"${SITE}","p":{"__proto__":"v"}}` },
        400,
        'invalid_request',
      ],
      [
        'constructor as a property key',
        { raw: `{"n":"Signup","u":"https://${SITE}/","d":"${SITE}","props":{"constructor":"v"}}` },
        400,
        'invalid_request',
      ],
      [
        'revenue on a pageview',
        { body: { n: 'pageview', u: `https://${SITE}/`, d: SITE, $: { amount: 1, currency: 'USD' } } },
        400,
        'invalid_request',
      ],
      [
        'revenue in a bad currency',
        { body: { n: 'Buy', u: `https://${SITE}/`, d: SITE, $: { amount: 1, currency: 'usd' } } },
        400,
        'invalid_request',
      ],
      [
        'revenue past 2^53 cents',
        { body: { n: 'Buy', u: `https://${SITE}/`, d: SITE, $: { amount: 1e20, currency: 'USD' } } },
        400,
        'invalid_request',
      ],
      ['a path with NUL', { body: { n: 'pageview', u: `https://${SITE}/a%00b`, d: SITE } }, 400, 'invalid_request'],
      ['a bad domain', { body: { n: 'pageview', u: `https://${SITE}/`, d: 'not a domain' } }, 400, 'invalid_request'],
      [
        'eleven domains',
        {
          body: {
            n: 'pageview',
            u: `https://${SITE}/`,
            d: Array.from({ length: 11 }, (_, i) => `s${i}.test`).join(','),
          },
        },
        400,
        'invalid_request',
      ],
      [
        'another domain',
        { body: { n: 'pageview', u: 'https://elsewhere.test/', d: 'elsewhere.test' } },
        403,
        'domain_not_served',
      ],
      [
        'a served and an unserved domain',
        { body: { n: 'pageview', u: `https://${SITE}/`, d: `${SITE},elsewhere.test` } },
        403,
        'domain_not_served',
      ],
      [
        'a body over 128 KiB',
        { raw: JSON.stringify({ n: 'pageview', u: `https://${SITE}/`, d: SITE, pad: 'x'.repeat(140_000) }) },
        413,
        'payload_too_large',
      ],
      ['a body over 1 MiB', { raw: 'x'.repeat(2 * 1024 * 1024) }, 413, 'payload_too_large'],
    ];
    for (const [what, input, status, code] of cases) {
      const res = await send(input.body, { raw: input.raw });
      expect(res.status, what).toBe(status);
      const body = JSON.parse(res.text);
      expect(body.error, what).toBe(code);
      expect(typeof body.message, what).toBe('string');
      expectNoInternals(res.text);
    }
    expect((await storedRows()).length).toBe(before);
  });

  it('limits the events one client address sends a minute', async () => {
    process.env.COLLECT_RATE_LIMIT_PER_MINUTE = '3';
    try {
      // The limit counts the connection's address (here 127.0.0.1), whatever X-Forwarded-For claims; a fresh minute
      // may begin between two requests, so the test sends until a 429 within one minute's worth of tries.
      const statuses: number[] = [];
      for (let i = 0; i < 8 && !statuses.includes(429); i++)
        statuses.push(
          (await send({ n: 'pageview', u: `https://${SITE}/limited`, d: SITE }, { from: `9.9.9.${i}` })).status,
        );
      expect(statuses).toContain(429);
    } finally {
      delete process.env.COLLECT_RATE_LIMIT_PER_MINUTE;
    }
  });

  it('imports the batches after one whose import fails, and keeps that one to try again', async () => {
    // A folder where a batch file should be: its import fails every time it is tried.
    const failing = join(api.paths.dataDir, 'collected', '000000000000001-aaaaaaaaaaaa.ndjson');
    mkdirSync(failing);
    try {
      const path = '/after-a-failed-batch';
      expect((await send({ n: 'pageview', u: `https://${SITE}${path}`, d: SITE })).status).toBe(202);
      expect((await storedRows()).filter((r) => r.url_path === path)).toHaveLength(1);
      expect(existsSync(failing)).toBe(true);
    } finally {
      rmSync(failing, { recursive: true });
    }
  });

  it('counts an IPv6 client by its /64 network, as one subscriber holds a whole /64', async () => {
    process.env.COLLECT_RATE_LIMIT_PER_MINUTE = '3';
    try {
      const nowMs = Date.parse('2026-11-25T12:00:30Z'); // one minute for every call below
      const from = (connectedFrom: string) =>
        collectEvent({
          body: JSON.stringify({ n: 'pageview', u: `https://${SITE}/v6`, d: SITE }),
          userAgent: CHROME_WINDOWS,
          connectedFrom,
          forwardedFor: undefined,
          nowMs,
        }).then(
          () => 'admitted',
          (error: Error) => error.constructor.name,
        );
      const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2:ffff::2', '2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd'];
      for (const address of sameNetwork) expect(await from(address), address).toBe('admitted');
      expect(await from('2001:db8:1:2::4')).toBe('RateLimitedError');
      // The next /64 and an IPv4 client are other clients.
      expect(await from('2001:db8:1:3::1')).toBe('admitted');
      expect(await from('198.51.100.7')).toBe('admitted');
    } finally {
      delete process.env.COLLECT_RATE_LIMIT_PER_MINUTE;
    }
  });
});

describe('privacy', () => {
  it('gives one visitor another id on another day and on another site, and never stores the salt', async () => {
    forgetServedDomains();
    const request = (domain: string, nowMs: number) => ({
      body: JSON.stringify({ n: 'pageview', u: `https://${domain}/salted`, d: domain }),
      userAgent: CHROME_WINDOWS,
      connectedFrom: '203.0.113.9',
      forwardedFor: undefined,
      nowMs,
    });
    const day1 = Date.parse('2026-11-20T23:59:00Z');
    const day2 = Date.parse('2026-11-21T00:01:00Z');
    await collectEvent(request(SITE, day1));
    await collectEvent(request(SITE, day2));
    await collectEvent(request('second.collect.test', day2));
    const salted = [...(await storedRows()), ...(await storedRows('second.collect.test'))].filter(
      (r) => r.url_path === '/salted',
    );
    expect(salted).toHaveLength(3);
    expect(new Set(salted.map((r) => r.visitor_id)).size).toBe(3);
    // Two minutes apart but under another visitor id: another session.
    expect(salted[0]!.session_id).not.toBe(salted[1]!.session_id);

    const salts = [await daySalt(day1), await daySalt(day2)];
    for (const file of filesUnder(api.paths.dataDir))
      for (const salt of salts) expect(readFileSync(file).includes(salt), file).toBe(false);
  });

  it('deletes a salt, a session and an address count once they expire (dynalite has no time to live)', async () => {
    const day = '2026-11-20';
    const item = (pk: string) =>
      documentClient().send(new GetCommand({ TableName: tableNames().counters, Key: { pk }, ConsistentRead: true }));
    expect((await item(`salt#${day}`)).Item).toBeDefined();
    // The 20th's salt expired on the 22nd; today's items have not expired.
    expect(await sweepExpiredCounters()).toBeGreaterThan(0);
    expect((await item(`salt#${day}`)).Item).toBeUndefined();
    expect((await item(`salt#${new Date().toISOString().slice(0, 10)}`)).Item).toBeDefined();
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // dynalite's own files hold the counters table, where the salt lives: that table is never read by a query.
    if (name === 'dynamodb') return [];
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
