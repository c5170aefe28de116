import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// POST /v1/journeys/list through HTTP on test/fixtures/journeys-events.ts. Every expected value is worked out by
// hand from the fixture's comment; in the default range (UTC) the listed visitors are:
//   visitor  pv sess ev  revenue  first_seen           last_seen            latest revenue
//   alice     2   1   1    4900   2026-05-04 08:00:00  2026-05-04 08:05:00  2026-05-04 08:05:00
//   bob       3   2   0    -500   2026-05-04 20:00:00  2026-05-06 09:00:00  2026-05-06 09:00:00
//   carol     0   1   1       0   2026-05-05 12:00:00  2026-05-05 12:00:30  -
//   dave      1   1   1       0   2026-05-06 15:00:00  2026-05-06 15:00:00  -
//   erin      1   1   0       0   2026-05-06 15:00:00  2026-05-06 15:00:00  -
//   frank     2   1   0       0   2026-05-06 19:00:00  2026-05-06 19:05:00  -

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  const report = await api.importEvents(journeyEvents);
  expect(report.rejected).toEqual([]);
  token = (await api.createKey({ domains: ['journeys.test'] })).token;
});
afterAll(() => api?.close());

async function list(body: Record<string, unknown>) {
  const res = await api.request('POST', '/v1/journeys/list', {
    token,
    body: { domain: 'journeys.test', date_range: JOURNEYS_RANGE, ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function ids(body: Record<string, unknown>): Promise<string[]> {
  return (await list(body)).data.map((v: { visitor_id: string }) => v.visitor_id);
}

describe('visitor list items', () => {
  it('aggregates every field over the range, attributes from the first pageview', async () => {
    const { data } = await list({ sort_by: 'first_seen', sort_order: 'asc' });
    expect(data).toEqual([
      {
        visitor_id: 'alice',
        country: 'US',
        browser: 'Chrome',
        os: 'macOS',
        device: 'desktop',
        pageview_count: 2,
        session_count: 1,
        event_count: 1,
        total_revenue_cents: 4900,
        first_seen: '2026-05-04 08:00:00',
        last_seen: '2026-05-04 08:05:00',
        first_referrer: 'google.com',
        entry_page: '/',
        latest_revenue_date: '2026-05-04 08:05:00',
        revenue_event_count: 1,
      },
      {
        // The refund has no session: two sessions, and the refund counts as a revenue row.
        visitor_id: 'bob',
        country: 'DE',
        browser: 'Firefox',
        os: 'Windows',
        device: 'desktop',
        pageview_count: 3,
        session_count: 2,
        event_count: 0,
        total_revenue_cents: -500,
        first_seen: '2026-05-04 20:00:00',
        last_seen: '2026-05-06 09:00:00',
        first_referrer: '(direct)',
        entry_page: '/blog',
        latest_revenue_date: '2026-05-06 09:00:00',
        revenue_event_count: 2,
      },
      {
        // No pageview in the range: every first-pageview attribute is null; the auto row counts for last_seen only.
        visitor_id: 'carol',
        country: null,
        browser: null,
        os: null,
        device: null,
        pageview_count: 0,
        session_count: 1,
        event_count: 1,
        total_revenue_cents: 0,
        first_seen: '2026-05-05 12:00:00',
        last_seen: '2026-05-05 12:00:30',
        first_referrer: null,
        entry_page: null,
        latest_revenue_date: null,
        revenue_event_count: 0,
      },
      {
        visitor_id: 'dave',
        country: 'GB',
        browser: 'Safari',
        os: 'iOS',
        device: 'mobile',
        pageview_count: 1,
        session_count: 1,
        event_count: 1,
        total_revenue_cents: 0,
        first_seen: '2026-05-06 15:00:00',
        last_seen: '2026-05-06 15:00:00',
        first_referrer: 'twitter.com',
        entry_page: '/',
        latest_revenue_date: null,
        revenue_event_count: 0,
      },
      {
        visitor_id: 'erin',
        country: 'US',
        browser: 'Chrome',
        os: 'Android',
        device: 'mobile',
        pageview_count: 1,
        session_count: 1,
        event_count: 0,
        total_revenue_cents: 0,
        first_seen: '2026-05-06 15:00:00',
        last_seen: '2026-05-06 15:00:00',
        first_referrer: '(direct)',
        entry_page: '/docs',
        latest_revenue_date: null,
        revenue_event_count: 0,
      },
      {
        // The first pageview has no country; the later one (NL) must not fill it in.
        visitor_id: 'frank',
        country: null,
        browser: 'Chrome',
        os: 'Linux',
        device: 'desktop',
        pageview_count: 2,
        session_count: 1,
        event_count: 0,
        total_revenue_cents: 0,
        first_seen: '2026-05-06 19:00:00',
        last_seen: '2026-05-06 19:05:00',
        first_referrer: 'example.org',
        entry_page: '/features',
        latest_revenue_date: null,
        revenue_event_count: 0,
      },
    ]);
  });

  it('answers the meta and pagination shapes', async () => {
    const body = await list({});
    expect(Object.keys(body).sort()).toEqual(['data', 'meta', 'pagination']);
    expect(Object.keys(body.meta).sort()).toEqual(['date_range', 'domain', 'query_ms', 'timezone']);
    expect(body.meta).toMatchObject({
      domain: 'journeys.test',
      date_range: ['2026-05-04 00:00:00', '2026-05-06 23:59:59'],
      timezone: 'UTC',
    });
    expect(typeof body.meta.query_ms).toBe('number');
    expect(body.pagination).toEqual({ limit: 50, offset: 0, has_more: false, total: 6 });
  });

  it('defaults to the last 30 days', async () => {
    const res = await api.request('POST', '/v1/journeys/list', { token, body: { domain: 'journeys.test' } });
    expect(res.status).toBe(200);
    const [start, end] = res.body.meta.date_range as [string, string];
    expect(start).toMatch(/^\d{4}-\d{2}-\d{2} 00:00:00$/);
    expect(end).toMatch(/^\d{4}-\d{2}-\d{2} 23:59:59$/);
    expect((Date.parse(end.slice(0, 10)) - Date.parse(start.slice(0, 10))) / 86_400_000).toBe(29);
  });
});

describe('sorting', () => {
  // Ties (dave and erin at the same instant; the zeros of revenue; the nulls of latest_revenue) break on visitor_id.
  const orders: [string, 'asc' | 'desc', string[]][] = [
    ['last_seen', 'desc', ['frank', 'dave', 'erin', 'bob', 'carol', 'alice']],
    ['last_seen', 'asc', ['alice', 'carol', 'bob', 'dave', 'erin', 'frank']],
    ['first_seen', 'desc', ['frank', 'dave', 'erin', 'carol', 'bob', 'alice']],
    ['first_seen', 'asc', ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']],
    ['pageviews', 'desc', ['bob', 'alice', 'frank', 'dave', 'erin', 'carol']],
    ['pageviews', 'asc', ['carol', 'dave', 'erin', 'alice', 'frank', 'bob']],
    ['sessions', 'desc', ['bob', 'alice', 'carol', 'dave', 'erin', 'frank']],
    ['sessions', 'asc', ['alice', 'carol', 'dave', 'erin', 'frank', 'bob']],
    ['revenue', 'desc', ['alice', 'carol', 'dave', 'erin', 'frank', 'bob']],
    ['revenue', 'asc', ['bob', 'carol', 'dave', 'erin', 'frank', 'alice']],
    // Visitors without revenue come last in both orders.
    ['latest_revenue', 'desc', ['bob', 'alice', 'carol', 'dave', 'erin', 'frank']],
    ['latest_revenue', 'asc', ['alice', 'bob', 'carol', 'dave', 'erin', 'frank']],
  ];
  it.each(orders)('sort_by %s %s', async (sort_by, sort_order, expected) => {
    expect(await ids({ sort_by, sort_order })).toEqual(expected);
  });

  it('defaults to last_seen descending', async () => {
    expect(await ids({})).toEqual(['frank', 'dave', 'erin', 'bob', 'carol', 'alice']);
    expect(await ids({ sort_by: 'pageviews' })).toEqual(['bob', 'alice', 'frank', 'dave', 'erin', 'carol']);
  });
});

describe('bounds and revenue options', () => {
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['pageviews_gt is strict', { pageviews_gt: 1 }, ['frank', 'bob', 'alice']],
    ['pageviews_gt 2', { pageviews_gt: 2 }, ['bob']],
    ['pageviews_lt is strict', { pageviews_lt: 2 }, ['dave', 'erin', 'carol']],
    ['pageviews_lt 1 keeps visitors without pageviews', { pageviews_lt: 1 }, ['carol']],
    ['pageviews between', { pageviews_gt: 1, pageviews_lt: 3 }, ['frank', 'alice']],
    ['sessions_gt is strict', { sessions_gt: 1 }, ['bob']],
    ['sessions_lt is strict', { sessions_lt: 2 }, ['frank', 'dave', 'erin', 'carol', 'alice']],
    ['sessions_lt 1', { sessions_lt: 1 }, []],
    ['revenue_gt 0', { revenue_gt: 0 }, ['alice']],
    ['revenue_gt is strict', { revenue_gt: 4900 }, []],
    ['revenue_gt just below', { revenue_gt: 4899 }, ['alice']],
    ['revenue_lt 0 finds the net refund', { revenue_lt: 0 }, ['bob']],
    ['revenue_lt is strict; no revenue counts as 0', { revenue_lt: 4900 }, ['frank', 'dave', 'erin', 'bob', 'carol']],
    ['has_revenue keeps visitors with a revenue row, refunds included', { has_revenue: true }, ['bob', 'alice']],
    ['has_revenue false filters nothing', { has_revenue: false }, ['frank', 'dave', 'erin', 'bob', 'carol', 'alice']],
    ['first_purchase: alice paid before the range', { first_purchase: true }, ['bob']],
    [
      'first_purchase false filters nothing',
      { first_purchase: false },
      ['frank', 'dave', 'erin', 'bob', 'carol', 'alice'],
    ],
    [
      'first_purchase with the earlier purchases in range',
      { first_purchase: true, date_range: ['2026-04-20', '2026-05-06'] },
      ['bob', 'alice', 'rita'],
    ],
    [
      'bounds combine with filters',
      { pageviews_gt: 1, filters: [['page', 'is', '/pricing']] },
      ['frank', 'bob', 'alice'],
    ],
  ];
  it.each(cases)('%s', async (_, body, expected) => {
    const { data, pagination } = await list(body);
    expect(data.map((v: { visitor_id: string }) => v.visitor_id)).toEqual(expected);
    expect(pagination.total).toBe(expected.length);
  });
});

describe('filters', () => {
  it('says in meta when the whole range lies after now: no visitors, and future_range', async () => {
    const future = await list({ date_range: ['2099-01-01', '2099-01-31'] });
    expect(future.data).toEqual([]);
    expect(future.meta.future_range).toBe(true);
    expect((await list({})).meta).not.toHaveProperty('future_range');
  });

  it('answers a filter given twice as given once: it means the same', async () => {
    const once = await list({ filters: [['page', 'is', '/pricing']] });
    const twice = await list({
      filters: [
        ['page', 'is', '/pricing'],
        ['page', 'is', '/pricing'],
      ],
    });
    expect(once.data.length).toBeGreaterThan(0);
    expect(twice.data).toEqual(once.data);
  });

  const cases: [string, unknown[][], string[]][] = [
    ['page is', [['page', 'is', '/pricing']], ['frank', 'bob', 'alice']],
    ['page is, several values', [['page', 'is', '/,/docs']], ['dave', 'erin', 'alice']],
    ['country is', [['country', 'is', 'DE']], ['bob']],
    ['country is, several values', [['country', 'is', 'GB,FR']], ['dave', 'carol']],
    // bob's refund has no country, and a missing value passes is_not.
    ['country is_not', [['country', 'is_not', 'DE']], ['frank', 'dave', 'erin', 'bob', 'carol', 'alice']],
    [
      'country is_not with the missing label',
      [['country', 'is_not', 'DE,(not set)']],
      ['frank', 'dave', 'erin', 'carol', 'alice'],
    ],
    ['country is (not set)', [['country', 'is', '(not set)']], ['frank', 'bob']],
    ['page contains', [['page', 'contains', 'blog']], ['bob']],
    ['browser not_contains', [['browser', 'not_contains', 'hrom']], ['dave', 'bob', 'carol']],
    ['page starts_with', [['page', 'starts_with', '/blog']], ['bob']],
    ['starts_with is case-sensitive', [['os', 'starts_with', 'Mac']], []],
    ['os starts_with', [['os', 'starts_with', 'mac']], ['alice']],
    ['referrer matches the referrer domain', [['referrer', 'is', 'example.org']], ['frank']],
    ['event is', [['event', 'is', 'signup']], ['alice']],
    ['event is, several names', [['event', 'is', 'signup,share']], ['dave', 'alice']],
    ['event_property is', [['event_property', 'is', 'plan:pro']], ['alice']],
    // Custom events without the property pass is_not; auto rows are no custom events.
    ['event_property is_not', [['event_property', 'is_not', 'plan:pro']], ['dave', 'carol']],
    ['event_property contains', [['event_property', 'contains', 'source:foot']], ['carol']],
    [
      'event and page on the same row',
      [
        ['event', 'is', 'signup'],
        ['page', 'is', '/pricing'],
      ],
      ['alice'],
    ],
    [
      'event and page that no single row has',
      [
        ['event', 'is', 'signup'],
        ['page', 'is', '/'],
      ],
      [],
    ],
    [
      'two row filters on the same row',
      [
        ['country', 'is', 'DE'],
        ['page', 'is', '/blog'],
      ],
      ['bob'],
    ],
  ];
  it.each(cases)('%s', async (_, filters, expected) => {
    const { data, pagination } = await list({ filters });
    expect(data.map((v: { visitor_id: string }) => v.visitor_id)).toEqual(expected);
    expect(pagination.total).toBe(expected.length);
  });

  it('aggregates over all the visitor rows, not only those that matched', async () => {
    const { data } = await list({ filters: [['page', 'is', '/blog']] });
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      visitor_id: 'bob',
      pageview_count: 3,
      session_count: 2,
      total_revenue_cents: -500,
      revenue_event_count: 2,
    });
  });
});

describe('pagination', () => {
  it('walks every visitor exactly once', async () => {
    const pages = [];
    for (let offset = 0; offset < 8; offset += 2) pages.push(await list({ limit: 2, offset }));
    expect(pages.map((p) => p.data.map((v: { visitor_id: string }) => v.visitor_id))).toEqual([
      ['frank', 'dave'],
      ['erin', 'bob'],
      ['carol', 'alice'],
      [],
    ]);
    expect(pages.map((p) => p.pagination)).toEqual([
      { limit: 2, offset: 0, has_more: true, total: 6 },
      { limit: 2, offset: 2, has_more: true, total: 6 },
      { limit: 2, offset: 4, has_more: false, total: 6 },
      { limit: 2, offset: 6, has_more: false, total: 6 },
    ]);
  });

  it('counts the total past the last page', async () => {
    expect((await list({ offset: 100, filters: [['page', 'is', '/pricing']] })).pagination).toEqual({
      limit: 50,
      offset: 100,
      has_more: false,
      total: 3,
    });
  });

  it('answers an empty range with total 0', async () => {
    expect(await list({ date_range: ['2025-01-01', '2025-01-31'] })).toMatchObject({
      data: [],
      pagination: { limit: 50, offset: 0, has_more: false, total: 0 },
    });
  });
});

describe('time zones and range bounds', () => {
  it('shifts the range and every timestamp to Asia/Kolkata (UTC+05:30)', async () => {
    // The range is 2026-05-03 18:30 .. 2026-05-06 18:30 UTC: frank's only row in it is 05-03 19:00 UTC.
    const body = await list({ timezone: 'Asia/Kolkata', sort_by: 'first_seen', sort_order: 'asc' });
    expect(body.meta).toMatchObject({
      date_range: ['2026-05-04 00:00:00', '2026-05-06 23:59:59'],
      timezone: 'Asia/Kolkata',
    });
    expect(
      body.data.map((v: Record<string, unknown>) => [v.visitor_id, v.first_seen, v.last_seen, v.latest_revenue_date]),
    ).toEqual([
      ['frank', '2026-05-04 00:30:00', '2026-05-04 00:30:00', null],
      ['alice', '2026-05-04 13:30:00', '2026-05-04 13:35:00', '2026-05-04 13:35:00'],
      ['bob', '2026-05-05 01:30:00', '2026-05-06 14:30:00', '2026-05-06 14:30:00'],
      ['carol', '2026-05-05 17:30:00', '2026-05-05 17:30:30', null],
      ['dave', '2026-05-06 20:30:00', '2026-05-06 20:30:00', null],
      ['erin', '2026-05-06 20:30:00', '2026-05-06 20:30:00', null],
    ]);
    expect(body.data[0]).toMatchObject({
      country: 'IN',
      entry_page: '/',
      first_referrer: '(direct)',
      pageview_count: 1,
    });
  });

  it('bounds a one-day range by local midnights', async () => {
    // 2026-05-07 in UTC holds only carol's pageview; in Kolkata it starts 05-06 18:30 UTC and takes frank's s8 too.
    expect(await ids({ date_range: ['2026-05-07', '2026-05-07'] })).toEqual(['carol']);
    expect(await ids({ date_range: ['2026-05-07', '2026-05-07'], timezone: 'Asia/Kolkata' })).toEqual([
      'carol',
      'frank',
    ]);
    expect(await ids({ date_range: ['2026-05-06', '2026-05-06'], timezone: 'America/Los_Angeles' })).toEqual([
      'frank',
      'dave',
      'erin',
      'bob',
    ]);
  });
});

describe('scope', () => {
  it('reads only dev rows with is_dev: true', async () => {
    const { data } = await list({ is_dev: true });
    expect(data.map((v: Record<string, unknown>) => [v.visitor_id, v.pageview_count, v.country, v.entry_page])).toEqual(
      [
        ['alice', 1, 'NL', '/dev'],
        ['gus', 1, null, '/'],
      ],
    );
  });

  it('never mixes in the other domain that shares a visitor id', async () => {
    const both = (await api.createKey({ type: 'personal', domains: ['journeys.test', 'other.test'] })).token;
    const res = await api.request('POST', '/v1/journeys/list', {
      token: both,
      body: { domain: 'other.test', date_range: JOURNEYS_RANGE, sort_by: 'first_seen', sort_order: 'asc' },
    });
    expect(
      res.body.data.map((v: Record<string, unknown>) => [
        v.visitor_id,
        v.pageview_count,
        v.total_revenue_cents,
        v.country,
      ]),
    ).toEqual([
      ['alice', 1, 999, 'SE'],
      ['olga', 1, 0, null],
    ]);
  });
});
