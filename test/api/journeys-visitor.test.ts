import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { expectErrorResponse } from '../support/http-assertions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// POST /v1/journeys/timeline, /stats and /activity through HTTP on test/fixtures/journeys-events.ts. Every
// expected value is worked out by hand from the fixture's comment.

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  const report = await api.importEvents(journeyEvents);
  expect(report.rejected).toEqual([]);
  token = (await api.createKey({ type: 'personal', domains: ['journeys.test', 'other.test'] })).token;
});
afterAll(() => api?.close());

async function call(endpoint: 'timeline' | 'stats' | 'activity', body: Record<string, unknown>) {
  return api.request('POST', `/v1/journeys/${endpoint}`, { token, body: { domain: 'journeys.test', ...body } });
}

async function ok(endpoint: 'timeline' | 'stats' | 'activity', body: Record<string, unknown>) {
  const res = await call(endpoint, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const timeline = (body: Record<string, unknown>) => ok('timeline', { date_range: JOURNEYS_RANGE, ...body });

const aliceEntry = {
  type: 'pageview',
  session_id: 's1',
  url_path: '/',
  is_entry_page: 1,
  referrer: 'https://www.google.com/search?q=x',
  utm_source: 'google',
  scroll_depth: 50,
  country: 'US',
  browser: 'Chrome',
  os: 'macOS',
  device: 'desktop',
};

describe('timeline', () => {
  it('lists the range most recent first, with exactly the fields of each item type', async () => {
    const body = await timeline({ visitor_id: 'alice' });
    expect(body.data).toEqual([
      {
        timestamp: '2026-05-04 08:05:00',
        type: 'revenue',
        session_id: '',
        transaction_id: 't1',
        amount_cents: 4900,
        currency: 'USD',
        revenue_event: 'payment',
      },
      {
        timestamp: '2026-05-04 08:02:00',
        type: 'event',
        session_id: '',
        event_name: 'signup',
        event_properties: '{"plan":"pro"}',
      },
      { timestamp: '2026-05-04 08:01:00', type: 'pageview', session_id: 's1', url_path: '/pricing', is_entry_page: 0 },
      { timestamp: '2026-05-04 08:00:00', ...aliceEntry },
    ]);
    // toEqual ignores keys whose value is undefined: pin the key sets themselves.
    expect(body.data.map((item: object) => Object.keys(item).sort())).toEqual([
      ['amount_cents', 'currency', 'revenue_event', 'session_id', 'timestamp', 'transaction_id', 'type'],
      ['event_name', 'event_properties', 'session_id', 'timestamp', 'type'],
      ['is_entry_page', 'session_id', 'timestamp', 'type', 'url_path'],
      [
        'browser',
        'country',
        'device',
        'is_entry_page',
        'os',
        'referrer',
        'scroll_depth',
        'session_id',
        'timestamp',
        'type',
        'url_path',
        'utm_source',
      ],
    ]);
    expect(JSON.parse(body.data[1].event_properties)).toEqual({ plan: 'pro' });
  });

  it('answers the meta and pagination shapes', async () => {
    const body = await timeline({ visitor_id: 'alice' });
    expect(Object.keys(body).sort()).toEqual(['data', 'meta', 'pagination']);
    expect(Object.keys(body.meta).sort()).toEqual(['date_range', 'domain', 'query_ms', 'timezone', 'visitor_id']);
    expect(body.meta).toMatchObject({
      domain: 'journeys.test',
      visitor_id: 'alice',
      date_range: ['2026-05-04 00:00:00', '2026-05-06 23:59:59'],
      timezone: 'UTC',
    });
    expect(body.pagination).toEqual({ limit: 100, offset: 0, has_more: false });
  });

  it('adds auto items only with include_auto_events: true', async () => {
    const body = await timeline({ visitor_id: 'alice', include_auto_events: true });
    expect(body.data.map((i: { type: string }) => i.type)).toEqual([
      'revenue',
      'auto',
      'event',
      'pageview',
      'pageview',
    ]);
    expect(body.data[1]).toEqual({
      timestamp: '2026-05-04 08:03:00',
      type: 'auto',
      session_id: '',
      event_name: 'click',
      event_properties: '{"selector":"#buy"}',
    });
    expect((await timeline({ visitor_id: 'alice', include_auto_events: false })).data).toHaveLength(4);
  });

  it('shows timestamps in the request time zone', async () => {
    const body = await timeline({ visitor_id: 'alice', timezone: 'Asia/Kolkata' });
    expect(body.data.map((i: { timestamp: string }) => i.timestamp)).toEqual([
      '2026-05-04 13:35:00',
      '2026-05-04 13:32:00',
      '2026-05-04 13:31:00',
      '2026-05-04 13:30:00',
    ]);
    expect(body.meta).toMatchObject({
      timezone: 'Asia/Kolkata',
      date_range: ['2026-05-04 00:00:00', '2026-05-06 23:59:59'],
    });
  });

  it('bounds the range in the request time zone', async () => {
    // Kolkata's 2026-05-04 starts at 05-03 18:30 UTC, so frank's 19:00 UTC pageview falls on it.
    const body = await timeline({
      visitor_id: 'frank',
      date_range: ['2026-05-04', '2026-05-04'],
      timezone: 'Asia/Kolkata',
    });
    expect(body.data).toEqual([
      {
        timestamp: '2026-05-04 00:30:00',
        type: 'pageview',
        session_id: 's7',
        url_path: '/',
        is_entry_page: 1,
        referrer: null,
        utm_source: null,
        country: 'IN',
        browser: 'Chrome',
        os: 'Linux',
        device: 'desktop',
      },
    ]);
    expect((await call('timeline', { visitor_id: 'frank', date_range: ['2026-05-04', '2026-05-04'] })).status).toBe(
      404,
    );
  });

  it('pages in the engine: has_more, no total, nothing skipped or repeated', async () => {
    const pages = [];
    for (let offset = 0; offset < 6; offset += 2) pages.push(await timeline({ visitor_id: 'bob', limit: 2, offset }));
    expect(
      pages.map((p) => p.data.map((i: { timestamp: string; type: string }) => `${i.timestamp} ${i.type}`)),
    ).toEqual([
      ['2026-05-06 09:00:00 revenue', '2026-05-06 00:10:00 revenue'],
      ['2026-05-06 00:05:00 pageview', '2026-05-05 23:55:00 pageview'],
      ['2026-05-04 20:00:00 pageview'],
    ]);
    expect(pages.map((p) => p.pagination)).toEqual([
      { limit: 2, offset: 0, has_more: true },
      { limit: 2, offset: 2, has_more: true },
      { limit: 2, offset: 4, has_more: false },
    ]);
    // Entry pages, direct and without a known scroll depth (omitted), and a refund item.
    expect(pages[2]!.data[0]).toEqual({
      timestamp: '2026-05-04 20:00:00',
      type: 'pageview',
      session_id: 's2',
      url_path: '/blog',
      is_entry_page: 1,
      referrer: null,
      utm_source: null,
      country: 'DE',
      browser: 'Firefox',
      os: 'Windows',
      device: 'desktop',
    });
    expect(pages[1]!.data.map((i: { is_entry_page: number }) => i.is_entry_page)).toEqual([0, 1]);
    expect(pages[0]!.data[0]).toEqual({
      timestamp: '2026-05-06 09:00:00',
      type: 'revenue',
      session_id: '',
      transaction_id: 't3',
      amount_cents: -2500,
      currency: 'EUR',
      revenue_event: 'refund',
    });
  });

  it('makes the first pageview of a session inside the range its entry page', async () => {
    // s3 began on 05-05 with /blog/post; read from 05-06 only, /pricing is its first pageview.
    const body = await timeline({ visitor_id: 'bob', date_range: ['2026-05-06', '2026-05-06'] });
    expect(body.data[2]).toEqual({
      timestamp: '2026-05-06 00:05:00',
      type: 'pageview',
      session_id: 's3',
      url_path: '/pricing',
      is_entry_page: 1,
      referrer: 'https://news.ycombinator.com/item?id=1',
      utm_source: null,
      country: 'DE',
      browser: 'Firefox',
      os: 'Windows',
      device: 'desktop',
    });
  });

  it('breaks ties on the same instant by type', async () => {
    expect((await timeline({ visitor_id: 'dave' })).data).toEqual([
      { timestamp: '2026-05-06 15:00:00', type: 'event', session_id: '', event_name: 'share', event_properties: '{}' },
      {
        timestamp: '2026-05-06 15:00:00',
        type: 'pageview',
        session_id: 's5',
        url_path: '/',
        is_entry_page: 1,
        referrer: 'https://twitter.com/someone',
        utm_source: 'twitter',
        country: 'GB',
        browser: 'Safari',
        os: 'iOS',
        device: 'mobile',
      },
    ]);
  });

  it('answers an empty page past the end for a known visitor', async () => {
    expect(await timeline({ visitor_id: 'alice', offset: 10 })).toMatchObject({
      data: [],
      pagination: { limit: 100, offset: 10, has_more: false },
    });
  });

  it('reads dev rows only with is_dev: true', async () => {
    expect((await timeline({ visitor_id: 'alice', is_dev: true })).data).toEqual([
      {
        timestamp: '2026-05-05 11:00:00',
        type: 'pageview',
        session_id: 'd1',
        url_path: '/dev',
        is_entry_page: 1,
        referrer: null,
        utm_source: null,
        country: 'NL',
        browser: 'Chrome',
        os: 'macOS',
        device: 'desktop',
      },
    ]);
    expect((await timeline({ visitor_id: 'gus', is_dev: true })).data).toHaveLength(1);
  });

  it.each([
    ['an unknown visitor', { visitor_id: 'nobody' }],
    ['a visitor with no rows in the range', { visitor_id: 'rita' }],
    ['a visitor of another domain only', { visitor_id: 'olga' }],
    ['a dev-only visitor without is_dev', { visitor_id: 'gus' }],
    ['a visitor without dev rows with is_dev', { visitor_id: 'bob', is_dev: true }],
  ])('is a 404 for %s', async (_, body) => {
    expectErrorResponse(await call('timeline', { date_range: JOURNEYS_RANGE, ...body }), 404, 'not_found');
  });
});

describe('stats', () => {
  it('aggregates all time; descriptive fields come from the first pageview ever', async () => {
    const body = await ok('stats', { visitor_id: 'alice' });
    // Scroll depths 20, 50, 85 (one pageview has none): 51.67. Sessions s0 10.3 s and s1 180 s: 95.15.
    expect(body.data).toEqual({
      visitor_id: 'alice',
      first_seen: '2026-04-20 09:59:00',
      last_seen: '2026-05-04 08:05:00',
      total_sessions: 2,
      total_pageviews: 4,
      total_events: 1,
      total_revenue_cents: 5900,
      avg_scroll_depth: 51.67,
      avg_session_duration_seconds: 95.15,
      country: 'US',
      region: 'CA',
      city: 'San Francisco',
      browser: 'Chrome',
      os: 'macOS',
      device: 'desktop',
      entry_page: '/',
      source: '(direct)',
      utm_source: 'newsletter',
      utm_medium: 'email',
      utm_campaign: 'spring',
    });
    expect(Object.keys(body.meta).sort()).toEqual(['domain', 'query_ms', 'visitor_id']);
    expect(body.meta).toMatchObject({ domain: 'journeys.test', visitor_id: 'alice' });
  });

  it('measures sessions over all their rows and ignores session-less revenue', async () => {
    // s2 is one pageview (0 s); s3 runs 23:55 -> 00:05 (600 s); the revenue rows have no session.
    expect((await ok('stats', { visitor_id: 'bob' })).data).toEqual({
      visitor_id: 'bob',
      first_seen: '2026-05-04 20:00:00',
      last_seen: '2026-05-06 09:00:00',
      total_sessions: 2,
      total_pageviews: 3,
      total_events: 0,
      total_revenue_cents: -500,
      avg_scroll_depth: 0,
      avg_session_duration_seconds: 300,
      country: 'DE',
      region: 'Berlin',
      city: 'Berlin',
      browser: 'Firefox',
      os: 'Windows',
      device: 'desktop',
      entry_page: '/blog',
      source: '(direct)',
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
    });
  });

  it('reads the first pageview ever, before any range', async () => {
    expect((await ok('stats', { visitor_id: 'frank' })).data).toMatchObject({
      country: 'IN',
      entry_page: '/',
      source: '(direct)',
      total_sessions: 2,
      total_pageviews: 3,
    });
    expect((await ok('stats', { visitor_id: 'dave' })).data).toMatchObject({
      source: 'twitter.com',
      utm_source: 'twitter',
      total_events: 1,
    });
  });

  it('answers zeros and nulls for a visitor without pageviews or sessions', async () => {
    expect((await ok('stats', { visitor_id: 'rita' })).data).toEqual({
      visitor_id: 'rita',
      first_seen: '2026-04-25 14:00:00',
      last_seen: '2026-04-25 14:00:00',
      total_sessions: 0,
      total_pageviews: 0,
      total_events: 0,
      total_revenue_cents: 300,
      avg_scroll_depth: 0,
      avg_session_duration_seconds: 0,
      country: null,
      region: null,
      city: null,
      browser: null,
      os: null,
      device: null,
      entry_page: null,
      source: null,
      utm_source: null,
      utm_medium: null,
      utm_campaign: null,
    });
  });

  it('keeps dev rows and domains apart', async () => {
    expect((await ok('stats', { visitor_id: 'alice', is_dev: true })).data).toMatchObject({
      first_seen: '2026-05-05 11:00:00',
      last_seen: '2026-05-05 11:00:00',
      total_sessions: 1,
      total_pageviews: 1,
      total_revenue_cents: 0,
      country: 'NL',
      entry_page: '/dev',
    });
    expect((await ok('stats', { visitor_id: 'alice', domain: 'other.test' })).data).toMatchObject({
      first_seen: '2026-05-05 10:00:00',
      last_seen: '2026-05-05 10:01:00',
      total_pageviews: 1,
      total_revenue_cents: 999,
      country: 'SE',
      entry_page: '/other',
    });
  });

  it.each([
    ['an unknown visitor', { visitor_id: 'nobody' }],
    ['a visitor of another domain only', { visitor_id: 'olga' }],
    ['a dev-only visitor without is_dev', { visitor_id: 'gus' }],
  ])('is a 404 for %s', async (_, body) => {
    expectErrorResponse(await call('stats', body), 404, 'not_found');
  });
});

describe('activity', () => {
  // 2026-04-20 and 2026-05-04 are Mondays, 2026-05-03 a Sunday.
  it.each([
    [
      'alice: ordered by day, then hour',
      'alice',
      [
        [1, 8, 2, 1],
        [1, 9, 2, 1],
      ],
    ],
    [
      'bob: across days and midnight',
      'bob',
      [
        [1, 20, 1, 1],
        [2, 23, 1, 1],
        [3, 0, 1, 1],
      ],
    ],
    [
      'frank: Sunday is 7',
      'frank',
      [
        [3, 19, 2, 1],
        [7, 19, 1, 1],
      ],
    ],
    ['carol: only pageviews count, all time', 'carol', [[4, 10, 1, 1]]],
    ['rita: a known visitor without pageviews', 'rita', []],
  ])('%s', async (_, visitor_id, expected) => {
    const body = await ok('activity', { visitor_id });
    expect(
      body.data.map((b: Record<string, number>) => [b.day_of_week, b.hour_of_day, b.pageviews, b.unique_visitors]),
    ).toEqual(expected);
    for (const bucket of body.data)
      expect(Object.keys(bucket).sort()).toEqual(['day_of_week', 'hour_of_day', 'pageviews', 'unique_visitors']);
    expect(body.meta).toMatchObject({ domain: 'journeys.test', visitor_id });
  });

  it('reads dev rows only with is_dev: true, and one domain', async () => {
    expect((await ok('activity', { visitor_id: 'gus', is_dev: true })).data).toEqual([
      { day_of_week: 2, hour_of_day: 10, pageviews: 1, unique_visitors: 1 },
    ]);
    expect((await ok('activity', { visitor_id: 'alice', domain: 'other.test' })).data).toEqual([
      { day_of_week: 2, hour_of_day: 10, pageviews: 1, unique_visitors: 1 },
    ]);
  });

  it.each([
    ['an unknown visitor', { visitor_id: 'nobody' }],
    ['a visitor of another domain only', { visitor_id: 'olga' }],
    ['a dev-only visitor without is_dev', { visitor_id: 'gus' }],
  ])('is a 404 for %s', async (_, body) => {
    expectErrorResponse(await call('activity', body), 404, 'not_found');
  });
});
