import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// POST /v1/query through HTTP on the hand-built shop.test data (test/fixtures/shop-events.ts). Every expected
// number is worked out by hand in the comments.

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  const report = await api.importEvents(shopEvents);
  expect(report.rejected).toEqual([]);
  token = (await api.createKey({ domains: ['shop.test'] })).token;
});
afterAll(() => api?.close());

type Row = { dimensions: Record<string, string>; metrics: Record<string, number> };

async function query(body: Record<string, unknown>) {
  const res = await api.request('POST', '/v1/query', { token, body: { date_range: SHOP_RANGE, ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: Row[]; meta: any; pagination: any; query: any };
}

async function totals(body: Record<string, unknown>) {
  const { data } = await query(body);
  expect(data).toHaveLength(1);
  return data[0]!.metrics;
}

function table(data: Row[]) {
  return data.map((r) => [...Object.values(r.dimensions), ...Object.values(r.metrics)]);
}

const allMetrics = [
  'pageviews',
  'visitors',
  'bounce_rate',
  'avg_session_duration',
  'revenue',
  'conversions',
  'conversion_rate',
];

describe('metrics without dimensions', () => {
  it('computes every metric over the range', async () => {
    // pageviews v1 2 + v2 1 + v3 3 + v4 2 = 8; visitors 4; sessions s1..s5, bounces s2 s4 -> 40;
    // durations 240 + 0 + 660 + 0 + 60 = 960 / 5 = 192; revenue 5000 - 1000 + 2500; converters v1 v3 v4 of 4.
    expect(await totals({ metrics: allMetrics, include_revenue: true })).toEqual({
      pageviews: 8,
      visitors: 4,
      bounce_rate: 40,
      avg_session_duration: 192,
      revenue: 6500,
      conversions: 3,
      conversion_rate: 75,
    });
  });

  it('defaults to visitors and pageviews over 30 days and echoes the interpreted query', async () => {
    const res = await api.request('POST', '/v1/query', { token, body: {} });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body.data[0].metrics)).toEqual(['visitors', 'pageviews']);
    expect(res.body.query).toMatchObject({
      metrics: ['visitors', 'pageviews'],
      dimensions: [],
      filters: [],
      sort: null,
      timezone: 'UTC',
    });
    expect(res.body.meta.domain).toBe('shop.test');
    expect(res.body.meta.date_range[1] >= '2026-11-01').toBe(true);
    expect(typeof res.body.meta.query_ms).toBe('number');
  });

  it('returns one row of zeros when nothing matches', async () => {
    expect(
      await totals({ date_range: ['2025-01-01', '2025-01-02'], metrics: allMetrics, include_revenue: true }),
    ).toEqual({
      pageviews: 0,
      visitors: 0,
      bounce_rate: 0,
      avg_session_duration: 0,
      revenue: 0,
      conversions: 0,
      conversion_rate: 0,
    });
  });

  it('reads dev rows never and other domains never', async () => {
    // v9 (dev) and other.test's v1 would add a pageview each.
    expect(await totals({ metrics: ['pageviews'] })).toEqual({ pageviews: 8 });
  });

  it('keeps meta and the query echo', async () => {
    const body = await query({
      metrics: ['pageviews'],
      filters: [['page', 'is', '/']],
      sort: { field: 'pageviews' },
      timezone: 'Asia/Kolkata',
    });
    expect(body.meta).toMatchObject({
      domain: 'shop.test',
      date_range: ['2026-03-01', '2026-03-03'],
      timezone: 'Asia/Kolkata',
    });
    expect(body.query).toEqual({
      metrics: ['pageviews'],
      dimensions: [],
      date_range: ['2026-03-01', '2026-03-03'],
      filters: [['page', 'is', '/']],
      sort: { field: 'pageviews', order: 'desc' },
      timezone: 'Asia/Kolkata',
    });
    expect(body.pagination).toEqual({ limit: 100, offset: 0, has_more: false });
  });

  it('says in meta when the whole range lies after now: zeros, and future_range', async () => {
    const future = await query({ date_range: ['2099-01-01', '2099-01-31'], metrics: ['visitors', 'pageviews'] });
    expect(future.data).toEqual([{ dimensions: {}, metrics: { visitors: 0, pageviews: 0 } }]);
    expect(future.meta.future_range).toBe(true);
    expect((await query({ metrics: ['visitors'] })).meta).not.toHaveProperty('future_range');
  });

  it('answers a filter given twice as given once: it means the same', async () => {
    const body = { metrics: ['pageviews', 'visitors', 'bounce_rate'], dimensions: ['country'] };
    const once = await query({ ...body, filters: [['page', 'is', '/pricing']] });
    const twice = await query({
      ...body,
      filters: [
        ['page', 'is', '/pricing'],
        ['page', 'is', '/pricing'],
      ],
    });
    expect(once.data.length).toBeGreaterThan(0);
    expect(twice.data).toEqual(once.data);
  });
});

describe('dimensions', () => {
  it('page: pageviews of the path, sessions that entered on it, revenue of rows on it', async () => {
    // '/' v1 v2, entered by s1 s2 (s2 bounced); '/pricing' v1 v4, entered by s5; '/blog/a' entered by s3;
    // '/blog/b' v3 twice, entered by s4 (bounced); '/checkout' v4, no entries. Revenue rows: /pricing 5000,
    // /checkout -1000 + 2500. Order: visitors desc, then page asc.
    const { data } = await query({
      dimensions: ['page'],
      metrics: ['visitors', 'pageviews', 'bounce_rate', 'revenue'],
      include_revenue: true,
    });
    expect(table(data)).toEqual([
      ['/', 2, 2, 50, 0],
      ['/pricing', 2, 2, 0, 5000],
      ['/blog/a', 1, 1, 0, 0],
      ['/blog/b', 1, 2, 100, 0],
      ['/checkout', 1, 1, 0, 1500],
    ]);
  });

  it('exit_page and visits (extensions): every row of a session under its last pageview; rows of no session (not set)', async () => {
    // Exit pages: s1 /pricing; s2 / (bounced); s3 and s4 /blog/b (s4 bounced, both v3, 3 pageviews); s5 /checkout.
    // The three revenue rows have no session: (not set), 5000 - 1000 + 2500. Order: visits desc, then page asc.
    const { data } = await query({
      dimensions: ['exit_page'],
      metrics: ['visits', 'visitors', 'pageviews', 'bounce_rate', 'revenue'],
      include_revenue: true,
    });
    expect(table(data)).toEqual([
      ['/blog/b', 2, 1, 3, 50, 0],
      ['/', 1, 1, 1, 100, 0],
      ['/checkout', 1, 1, 2, 0, 0],
      ['/pricing', 1, 1, 2, 0, 0],
      ['(not set)', 0, 0, 0, 0, 6500],
    ]);
  });

  it('entry_page (extension) by page: each pageview under the first page of its session', async () => {
    // Entries: s1 and s2 /, s3 /blog/a, s4 /blog/b, s5 /pricing. Order: pageviews desc, then both pages asc.
    const { data } = await query({ dimensions: ['entry_page', 'page'], metrics: ['pageviews'] });
    expect(table(data)).toEqual([
      ['/', '/', 2],
      ['/', '/pricing', 1],
      ['/blog/a', '/blog/a', 1],
      ['/blog/a', '/blog/b', 1],
      ['/blog/b', '/blog/b', 1],
      ['/pricing', '/checkout', 1],
      ['/pricing', '/pricing', 1],
    ]);
  });

  it('entry_page (extension) under a page filter: the kept sessions keep the entry page the filter did not keep', async () => {
    // page is /pricing keeps rows of s1 (entered on /) and s5 (entered on /pricing), and v1's revenue row (no
    // session, counted by no requested metric).
    const { data } = await query({
      dimensions: ['entry_page'],
      metrics: ['visitors', 'visits'],
      filters: [['page', 'is', '/pricing']],
    });
    expect(table(data)).toEqual([
      ['/', 1, 1],
      ['/pricing', 1, 1],
    ]);
  });

  it('referrer: the referrer domain, or (direct)', async () => {
    // google.com: v1 2 pv + payment 5000; news.ycombinator.com: v3 3 pv, s3 s4 (one bounce);
    // twitter.com: v4 2 pv + 2500; (direct): v2 1 pv (bounce) + the unattributed refund.
    const { data } = await query({
      dimensions: ['referrer'],
      metrics: ['pageviews', 'bounce_rate', 'revenue'],
      include_revenue: true,
    });
    expect(table(data)).toEqual([
      ['news.ycombinator.com', 3, 50, 0],
      ['google.com', 2, 0, 5000],
      ['twitter.com', 2, 0, 2500],
      ['(direct)', 1, 100, -1000],
    ]);
  });

  it.each([
    [
      'country',
      [
        ['US', 2, 5],
        ['DE', 1, 1],
        ['GB', 1, 2],
      ],
    ],
    [
      'region',
      [
        ['(not set)', 1, 1],
        ['CA', 1, 2],
        ['England', 1, 2],
        ['WA', 1, 3],
      ],
    ],
    [
      'city',
      [
        ['(not set)', 1, 1],
        ['London', 1, 2],
        ['San Francisco', 1, 2],
        ['Seattle', 1, 3],
      ],
    ],
    [
      'browser',
      [
        ['Chrome', 2, 4],
        ['Firefox', 1, 1],
        ['Safari', 1, 3],
      ],
    ],
    [
      'os',
      [
        ['Android', 1, 2],
        ['Windows', 1, 1],
        ['iOS', 1, 3],
        ['macOS', 1, 2],
      ],
    ],
    [
      'device',
      [
        ['desktop', 2, 3],
        ['mobile', 2, 5],
      ],
    ],
    [
      'utm_source',
      [
        ['(not set)', 2, 4],
        ['google', 1, 2],
        ['twitter', 1, 2],
      ],
    ],
    [
      'utm_medium',
      [
        ['(not set)', 3, 6],
        ['cpc', 1, 2],
      ],
    ],
    ['utm_campaign', [['(not set)', 4, 8]]],
    ['utm_content', [['(not set)', 4, 8]]],
    ['utm_term', [['(not set)', 4, 8]]],
  ])('%s groups rows by their own value, missing as (not set)', async (dimension, expected) => {
    const { data } = await query({ dimensions: [dimension], metrics: ['visitors', 'pageviews'] });
    expect(table(data)).toEqual(expected);
  });

  it('date in UTC: daily buckets, sessions in the bucket they start in', async () => {
    // 03-01: v1 2 + v2 1 (s1, s2: one bounce); 03-02: v3 2 (s3); 03-03: v3 1 + v4 2 (s4 bounce, s5).
    const { data } = await query({ dimensions: ['date'], metrics: ['pageviews', 'visitors', 'bounce_rate'] });
    expect(table(data)).toEqual([
      ['2026-03-01', 3, 2, 50],
      ['2026-03-02', 2, 1, 0],
      ['2026-03-03', 3, 2, 50],
    ]);
  });

  it('date in America/New_York (UTC-5): the range and the buckets move with the zone', async () => {
    // Range is 03-01 05:00Z .. 03-04 05:00Z: v5's 03-04 00:30Z row is 03-03 19:30 local and counts.
    // v2 23:30Z is 18:30 on 03-01; v3's 08:00Z is 03:00 on 03-03.
    const { data } = await query({
      dimensions: ['date'],
      metrics: ['pageviews', 'visitors'],
      timezone: 'America/New_York',
    });
    expect(table(data)).toEqual([
      ['2026-03-01', 3, 2],
      ['2026-03-02', 2, 1],
      ['2026-03-03', 4, 3],
    ]);
  });

  it('date in Asia/Kolkata (UTC+5:30): a half-hour zone', async () => {
    // Range is 02-28 18:30Z .. 03-03 18:30Z; v2's 23:30Z is 05:00 on 03-02.
    const { data } = await query({
      dimensions: ['date'],
      metrics: ['pageviews', 'visitors'],
      timezone: 'Asia/Kolkata',
    });
    expect(table(data)).toEqual([
      ['2026-03-01', 2, 1],
      ['2026-03-02', 3, 2],
      ['2026-03-03', 3, 2],
    ]);
  });

  it('week and month (extensions): named by their first day, weeks from Monday, sessions where they start', async () => {
    // 2026-03-01 is a Sunday: its week began on 02-23; 03-02 and 03-03 are in the week of 03-02. From 02-27, v1's
    // s0 (02-27) falls in February. Visitors per week: v1 v2 | v3 v4 (pageviews 1 + 2 + 1 | 2 + 1 + 2).
    const weeks = await query({ dimensions: ['week'], metrics: ['visitors', 'pageviews', 'visits'] });
    expect(table(weeks.data)).toEqual([
      ['2026-02-23', 2, 3, 2],
      ['2026-03-02', 2, 5, 3],
    ]);
    const months = await query({
      dimensions: ['month'],
      metrics: ['visitors', 'pageviews', 'bounce_rate'],
      date_range: ['2026-02-27', '2026-03-03'],
    });
    expect(table(months.data)).toEqual([
      ['2026-02-01', 1, 1, 100],
      ['2026-03-01', 4, 8, 40],
    ]);
  });

  it('hour in Asia/Kolkata: buckets on the local hour', async () => {
    const { data } = await query({ dimensions: ['hour'], metrics: ['pageviews'], timezone: 'Asia/Kolkata' });
    expect(table(data)).toEqual([
      ['2026-03-01 14:00:00', 2],
      ['2026-03-02 05:00:00', 1],
      ['2026-03-02 17:00:00', 2],
      ['2026-03-03 13:00:00', 1],
      ['2026-03-03 20:00:00', 2],
    ]);
  });

  it('hour in UTC and in America/New_York', async () => {
    const utc = await query({ dimensions: ['hour'], metrics: ['pageviews'], date_range: ['2026-03-01', '2026-03-01'] });
    expect(table(utc.data)).toEqual([
      ['2026-03-01 09:00:00', 2],
      ['2026-03-01 23:00:00', 1],
    ]);
    const ny = await query({
      dimensions: ['hour'],
      metrics: ['pageviews'],
      date_range: ['2026-03-03', '2026-03-03'],
      timezone: 'America/New_York',
    });
    // 03-03 local: v3 08:00Z -> 03:00, v4 15:00Z/15:01Z -> 10:00, v5 00:30Z (03-04) -> 19:00.
    expect(table(ny.data)).toEqual([
      ['2026-03-03 03:00:00', 1],
      ['2026-03-03 10:00:00', 2],
      ['2026-03-03 19:00:00', 1],
    ]);
  });

  it('event: every metric over the visitors who triggered that event', async () => {
    // signup: v1 + v4 -> 4 pv, sessions s1 s5, revenue 7500, both converted.
    // download: v3 -> 3 pv, sessions s3 s4 (one bounce), revenue -1000, converted.
    const { data } = await query({
      dimensions: ['event'],
      metrics: ['visitors', 'pageviews', 'bounce_rate', 'revenue', 'conversion_rate'],
      include_revenue: true,
    });
    expect(table(data)).toEqual([
      ['signup', 2, 4, 0, 7500, 100],
      ['download', 1, 3, 50, -1000, 100],
    ]);
  });

  it('two dimensions: date then country, chronological then by country', async () => {
    const { data } = await query({ dimensions: ['country', 'date'], metrics: ['pageviews'] });
    expect(table(data)).toEqual([
      ['DE', '2026-03-01', 1],
      ['US', '2026-03-01', 2],
      ['US', '2026-03-02', 2],
      ['GB', '2026-03-03', 2],
      ['US', '2026-03-03', 1],
    ]);
    expect(Object.keys(data[0]!.dimensions)).toEqual(['country', 'date']);
  });
});

describe('filters', () => {
  it.each([
    ['page is', [['page', 'is', '/pricing']], 2, 2],
    ['page is, comma list', [['page', 'is', '/,/checkout']], 3, 3],
    ['page is_not', [['page', 'is_not', '/']], 6, 3],
    ['page is_not, comma list', [['page', 'is_not', '/,/blog/b']], 4, 3],
    ['page contains', [['page', 'contains', 'blog']], 3, 1],
    ['page not_contains', [['page', 'not_contains', 'blog']], 5, 3],
    ['page starts_with', [['page', 'starts_with', '/b']], 3, 1],
    ['page is is case-sensitive', [['page', 'is', '/Pricing']], 0, 0],
    ['region is (not set) means missing', [['region', 'is', '(not set)']], 1, 1],
    ['region is_not passes missing values', [['region', 'is_not', 'CA']], 6, 3],
    ['region is_not (not set) drops missing values', [['region', 'is_not', '(not set)']], 7, 3],
    ['region contains never matches missing', [['region', 'contains', 'a']], 2, 1],
    ['region not_contains passes missing', [['region', 'not_contains', 'A']], 3, 2],
    ['referrer is the domain', [['referrer', 'is', 'google.com']], 2, 1],
    ['referrer is (direct)', [['referrer', 'is', '(direct)']], 1, 1],
    ['referrer is domain or (direct)', [['referrer', 'is', 'google.com,(direct)']], 3, 2],
    ['referrer is_not (direct)', [['referrer', 'is_not', '(direct)']], 7, 3],
    [
      'country and browser together',
      [
        ['country', 'is', 'US'],
        ['browser', 'is', 'Safari'],
      ],
      3,
      1,
    ],
    ['city starts_with', [['city', 'starts_with', 'San']], 2, 1],
    ['os is', [['os', 'is', 'iOS']], 3, 1],
    ['device is', [['device', 'is', 'mobile']], 5, 2],
    ['utm_source is', [['utm_source', 'is', 'google']], 2, 1],
    ['utm_medium is (not set)', [['utm_medium', 'is', '(not set)']], 6, 3],
    ['utm_campaign contains', [['utm_campaign', 'contains', 'x']], 0, 0],
    ['utm_content is_not', [['utm_content', 'is_not', 'x']], 8, 4],
    ['utm_term not_contains', [['utm_term', 'not_contains', 'x']], 8, 4],
    // Visitor filters: every row of the visitors who did it, even rows the event was not on.
    ['event is', [['event', 'is', 'signup']], 4, 2],
    ['event is_not: visitors with another custom event', [['event', 'is_not', 'signup']], 3, 1],
    ['event contains', [['event', 'contains', 'load']], 3, 1],
    ['event_property is', [['event_property', 'is', 'plan:pro']], 2, 1],
    ['event_property is, comma list', [['event_property', 'is', 'plan:pro,free']], 4, 2],
    ['event_property % and _ are data', [['event_property', 'contains', 'file:%b_']], 3, 1],
    ['event_property % is no wildcard', [['event_property', 'contains', 'file:a%c']], 0, 0],
    ['event_property unknown key', [['event_property', 'is', 'nope:pro']], 0, 0],
    ['exit_link is', [['exit_link', 'is', 'https://github.com/x']], 2, 1],
    ['exit_link contains', [['exit_link', 'contains', 'gitlab']], 0, 0],
    [
      'a row filter and a visitor filter',
      [
        ['country', 'is', 'US'],
        ['event', 'is', 'signup'],
      ],
      2,
      1,
    ],
  ])('%s', async (_, filters, pageviews, visitors) => {
    expect(await totals({ filters, metrics: ['pageviews', 'visitors'] })).toEqual({ pageviews, visitors });
  });

  it('session metrics use every kept session, measured over all its rows', async () => {
    // page is /pricing keeps rows of s1 and s5; their durations are 240 and 60 over all their rows.
    expect(
      await totals({
        filters: [['page', 'is', '/pricing']],
        metrics: ['bounce_rate', 'avg_session_duration', 'revenue'],
        include_revenue: true,
      }),
    ).toEqual({
      bounce_rate: 0,
      avg_session_duration: 150,
      revenue: 5000,
    });
  });

  it('treats quotes, backslashes and unicode in a value as data', async () => {
    for (const value of ["' OR 1=1 --", 'a\\b', '"; DROP TABLE events; --', 'ünïcødé 🚀', '%', '_']) {
      expect(await totals({ filters: [['page', 'is', value]], metrics: ['pageviews'] })).toEqual({ pageviews: 0 });
      expect(await totals({ filters: [['page', 'contains', value]], metrics: ['pageviews'] })).toEqual({
        pageviews: 0,
      });
    }
  });
});

describe('sorting and pagination', () => {
  it('sort.field need not be requested; ties break on the dimension ascending', async () => {
    const { data } = await query({
      dimensions: ['page'],
      metrics: ['pageviews'],
      sort: { field: 'bounce_rate', order: 'desc' },
    });
    expect(table(data)).toEqual([
      ['/blog/b', 2],
      ['/', 2],
      ['/blog/a', 1],
      ['/checkout', 1],
      ['/pricing', 2],
    ]);
  });

  it('sorts by a requested dimension (extension): its values in either order, then the other dimension', async () => {
    const desc = await query({ dimensions: ['page'], metrics: ['pageviews'], sort: { field: 'page', order: 'desc' } });
    expect(table(desc.data)).toEqual([
      ['/pricing', 2],
      ['/checkout', 1],
      ['/blog/b', 2],
      ['/blog/a', 1],
      ['/', 2],
    ]);
    // Countries descending, each country's devices ascending.
    const two = await query({
      dimensions: ['device', 'country'],
      metrics: ['visitors'],
      sort: { field: 'country', order: 'desc' },
    });
    expect(table(two.data)).toEqual([
      ['desktop', 'US', 1],
      ['mobile', 'US', 1],
      ['mobile', 'GB', 1],
      ['desktop', 'DE', 1],
    ]);
    const refused = await api.request('POST', '/v1/query', {
      token,
      body: { date_range: SHOP_RANGE, dimensions: ['page'], sort: { field: 'country' } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe(
      'sort.field: must be one of visitors, pageviews, revenue, bounce_rate, visits, or one of the requested dimensions',
    );
  });

  it('sorts ascending', async () => {
    const { data } = await query({
      dimensions: ['country'],
      metrics: ['visitors', 'pageviews'],
      sort: { field: 'pageviews', order: 'asc' },
    });
    expect(table(data)).toEqual([
      ['DE', 1, 1],
      ['GB', 1, 2],
      ['US', 2, 5],
    ]);
  });

  it('sorts by revenue with include_revenue', async () => {
    const { data } = await query({
      dimensions: ['page'],
      metrics: ['pageviews'],
      sort: { field: 'revenue', order: 'desc' },
      include_revenue: true,
    });
    expect(data.map((r) => r.dimensions.page)).toEqual(['/pricing', '/checkout', '/', '/blog/a', '/blog/b']);
  });

  it('walks every page once with offset += limit', async () => {
    const seen: string[] = [];
    const flags: boolean[] = [];
    for (let offset = 0; offset < 10; offset += 2) {
      const body = await query({ dimensions: ['page'], metrics: ['visitors'], limit: 2, offset });
      seen.push(...body.data.map((r) => r.dimensions.page!));
      flags.push(body.pagination.has_more);
      expect(body.pagination).toMatchObject({ limit: 2, offset });
      if (!body.pagination.has_more) break;
    }
    expect(seen).toEqual(['/', '/pricing', '/blog/a', '/blog/b', '/checkout']);
    expect(flags).toEqual([true, true, false]);
  });

  it('has_more is false when the page ends exactly at the last row', async () => {
    const body = await query({ dimensions: ['page'], metrics: ['visitors'], limit: 5 });
    expect(body.pagination.has_more).toBe(false);
  });
});

describe('presets', () => {
  it('resolve relative to today in the time zone; all starts at the first event', async () => {
    const all = await query({ date_range: 'all', metrics: ['pageviews'] });
    expect(all.meta.date_range[0]).toBe('2026-02-27');
    // 8 in range + v1 on 02-27 + v5 on 03-04
    expect(all.data[0]!.metrics.pageviews).toBe(10);
    const week = await query({ date_range: '7d', metrics: ['pageviews'], timezone: 'Pacific/Kiritimati' });
    const [start, end] = week.meta.date_range as [string, string];
    expect((Date.parse(end) - Date.parse(start)) / 86_400_000).toBe(6);
    const year = await query({ date_range: '12mo', metrics: ['pageviews'] });
    expect(year.meta.date_range[0]).toMatch(/^\d{4}-\d{2}-01$/);
  });
});
