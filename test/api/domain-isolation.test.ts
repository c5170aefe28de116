import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi, type TestResponse } from '../support/test-api.js';

// No request can read another domain's rows. Two sites share everything a careless query could join on:
// visitor ids, session ids, transaction ids, event names, property keys and paths. beta.test has more of each,
// and older rows, so any leak changes a number. Every endpoint is asked about alpha.test with alpha's project
// key and with a personal token holding both domains; the answers are alpha's hand-computed figures, and
// naming beta.test with alpha's key is a 403.
//
// alpha.test (2026-03-01 is a Sunday)
//   v1 s1 03-01 10:00 pv /  10:05 pv /pricing  10:06 event signup{plan:pro}        (US, Chrome, google.com)
//   v1 -- 03-01 10:10 revenue 1000 t1
//   v2 s2 03-02 09:00 pv /                                                         (DE, Firefox, direct)
// beta.test
//   v1 s0 02-20 08:00 pv /old                                                      (older than anything in alpha)
//   v1 s1 03-01 10:00 pv /  10:01 pv /pricing  10:02 pv /pricing  10:03 event signup{plan:enterprise, seats:10}
//         10:04 auto exit_link{url: https://beta.example/out}                      (FR, Safari, bing.com)
//   v1 -- 03-01 10:05 revenue 9000 t1
//   v2 s2 03-02 09:00 pv /  09:30 pv /pricing                                       (FR, Safari, direct)
//   v3 s3 03-02 12:00 pv /  12:01 event signup{plan:pro}                            (visitor only beta has)
//   v1 s9 03-01 11:00 pv /dev (dev row)

const A = 'alpha.test';
const B = 'beta.test';
const RANGE = ['2026-03-01', '2026-03-02'];

const alphaAttr = {
  country: 'US',
  browser: 'Chrome',
  os: 'macOS',
  device: 'desktop',
  referrer: 'https://www.google.com/',
  utm_source: 'google',
};
const alphaDirect = { country: 'DE', browser: 'Firefox', os: 'Windows', device: 'desktop' };
const betaAttr = {
  country: 'FR',
  browser: 'Safari',
  os: 'iOS',
  device: 'mobile',
  referrer: 'https://bing.com/',
  utm_source: 'bing',
};
const betaDirect = { country: 'FR', browser: 'Safari', os: 'iOS', device: 'mobile' };

const pv = (
  domain: string,
  ts: string,
  visitor: string,
  session: string,
  path: string,
  attr: object,
  extra: object = {},
) => ({
  domain,
  timestamp: ts,
  type: 'pageview',
  visitor_id: visitor,
  session_id: session,
  url_path: path,
  ...attr,
  ...extra,
});
const signup = (domain: string, ts: string, visitor: string, session: string, props: object, attr: object) => ({
  domain,
  timestamp: ts,
  type: 'event',
  visitor_id: visitor,
  session_id: session,
  url_path: '/pricing',
  event_name: 'signup',
  event_properties: props,
  ...attr,
});
const revenue = (domain: string, ts: string, visitor: string, cents: number, attr: object) => ({
  domain,
  timestamp: ts,
  type: 'revenue',
  visitor_id: visitor,
  url_path: '/pricing',
  transaction_id: 't1',
  amount_cents: cents,
  currency: 'USD',
  revenue_event: 'payment',
  ...attr,
});

const events = [
  pv(A, '2026-03-01T10:00:00Z', 'v1', 's1', '/', alphaAttr),
  pv(A, '2026-03-01T10:05:00Z', 'v1', 's1', '/pricing', alphaAttr),
  signup(A, '2026-03-01T10:06:00Z', 'v1', 's1', { plan: 'pro' }, alphaAttr),
  revenue(A, '2026-03-01T10:10:00Z', 'v1', 1000, alphaAttr),
  pv(A, '2026-03-02T09:00:00Z', 'v2', 's2', '/', alphaDirect),

  pv(B, '2026-02-20T08:00:00Z', 'v1', 's0', '/old', betaAttr),
  pv(B, '2026-03-01T10:00:00Z', 'v1', 's1', '/', betaAttr),
  pv(B, '2026-03-01T10:01:00Z', 'v1', 's1', '/pricing', betaAttr),
  pv(B, '2026-03-01T10:02:00Z', 'v1', 's1', '/pricing', betaAttr),
  signup(B, '2026-03-01T10:03:00Z', 'v1', 's1', { plan: 'enterprise', seats: '10' }, betaAttr),
  {
    domain: B,
    timestamp: '2026-03-01T10:04:00Z',
    type: 'auto',
    visitor_id: 'v1',
    session_id: 's1',
    url_path: '/pricing',
    event_name: 'exit_link',
    event_properties: { url: 'https://beta.example/out' },
    ...betaAttr,
  },
  revenue(B, '2026-03-01T10:05:00Z', 'v1', 9000, betaAttr),
  pv(B, '2026-03-02T09:00:00Z', 'v2', 's2', '/', betaDirect),
  pv(B, '2026-03-02T09:30:00Z', 'v2', 's2', '/pricing', betaDirect),
  pv(B, '2026-03-02T12:00:00Z', 'v3', 's3', '/', betaDirect),
  signup(B, '2026-03-02T12:01:00Z', 'v3', 's3', { plan: 'pro' }, betaDirect),
  pv(B, '2026-03-01T11:00:00Z', 'v1', 's9', '/dev', betaAttr, { is_dev: true }),
];

let api: TestApi;
let alphaKey: string;
let betaKey: string;
let bothToken: string;

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(events)).rejected).toEqual([]);
  alphaKey = (await api.createKey({ domains: [A], owner: 'user_alpha' })).token;
  betaKey = (await api.createKey({ domains: [B], owner: 'user_beta' })).token;
  bothToken = (await api.createKey({ type: 'personal', domains: [A, B], owner: 'user_both' })).token;
});
afterAll(() => api?.close());

/** The body without the timing figures, which differ between two runs of the same query. */
function stable(res: TestResponse) {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const { meta, ...rest } = res.body;
  const { query_ms: _ms, ...kept } = meta ?? {};
  return meta ? { ...rest, meta: kept } : rest;
}

/** Asks about alpha with alpha's project key and with the two-domain personal token: one and the same answer. */
async function askAlpha(
  method: string,
  path: string,
  payload: { body?: Record<string, unknown>; query?: Record<string, string> },
) {
  const withDomain = payload.body
    ? { body: { ...payload.body, domain: A } }
    : { query: { ...payload.query, domain: A } };
  const byProject = await api.request(method, path, { token: alphaKey, ...withDomain });
  const byPersonal = await api.request(method, path, { token: bothToken, ...withDomain });
  expect(stable(byPersonal)).toEqual(stable(byProject));
  return byProject.body;
}

async function expectForbiddenForAlphaKey(
  method: string,
  path: string,
  payload: { body?: Record<string, unknown>; query?: Record<string, string> },
) {
  const withDomain = payload.body
    ? { body: { ...payload.body, domain: B } }
    : { query: { ...payload.query, domain: B } };
  const res = await api.request(method, path, { token: alphaKey, ...withDomain });
  expect(res.status).toBe(403);
  expect(res.body.error).toBe('forbidden');
}

const rows = (data: { dimensions: Record<string, string>; metrics: Record<string, number> }[]) =>
  data.map((r) => [...Object.values(r.dimensions), ...Object.values(r.metrics)]);

describe('POST /v1/query', () => {
  const all = [
    'pageviews',
    'visitors',
    'bounce_rate',
    'avg_session_duration',
    'revenue',
    'conversions',
    'conversion_rate',
  ];

  it('totals: alpha alone (sessions s1 and s2 are not merged with beta s1 and s2)', async () => {
    const body = await askAlpha('POST', '/v1/query', {
      body: { date_range: RANGE, metrics: all, include_revenue: true },
    });
    // s1 10:00-10:06 (360 s, 2 pageviews), s2 one pageview: bounce 50, mean 180 s; revenue 1000 from v1 of 2.
    expect(body.data).toEqual([
      {
        dimensions: {},
        metrics: {
          pageviews: 3,
          visitors: 2,
          bounce_rate: 50,
          avg_session_duration: 180,
          revenue: 1000,
          conversions: 1,
          conversion_rate: 50,
        },
      },
    ]);
    expect(body.meta.domain).toBe(A);
  });

  it('beta, asked by its own key and by the personal token, has its own figures', async () => {
    const body = { date_range: RANGE, metrics: ['pageviews', 'visitors', 'revenue'], include_revenue: true };
    const own = await api.request('POST', '/v1/query', { token: betaKey, body });
    const personal = await api.request('POST', '/v1/query', { token: bothToken, body: { ...body, domain: B } });
    expect(own.body.data).toEqual([{ dimensions: {}, metrics: { pageviews: 6, visitors: 3, revenue: 9000 } }]);
    expect(stable(personal)).toEqual(stable(own));
  });

  it.each([
    [
      'page',
      [
        ['/', 2, 2],
        ['/pricing', 1, 1],
      ],
    ],
    [
      'country',
      [
        ['DE', 1, 1],
        ['US', 1, 2],
      ],
    ],
    [
      'browser',
      [
        ['Chrome', 1, 2],
        ['Firefox', 1, 1],
      ],
    ],
    [
      'referrer',
      [
        ['(direct)', 1, 1],
        ['google.com', 1, 2],
      ],
    ],
    [
      'utm_source',
      [
        ['(not set)', 1, 1],
        ['google', 1, 2],
      ],
    ],
    [
      'date',
      [
        ['2026-03-01', 1, 2],
        ['2026-03-02', 1, 1],
      ],
    ],
    ['event', [['signup', 1, 2]]],
  ])('by %s: only alpha values', async (dimension, expected) => {
    const body = await askAlpha('POST', '/v1/query', {
      body: {
        date_range: RANGE,
        dimensions: [dimension],
        metrics: ['visitors', 'pageviews'],
        sort: { field: 'visitors', order: 'desc' },
      },
    });
    expect(rows(body.data).sort()).toEqual([...expected].sort());
  });

  it.each([
    ['event is signup', ['event', 'is', 'signup'], 2],
    ['event_property plan:enterprise (beta v1 sent it)', ['event_property', 'is', 'plan:enterprise'], 0],
    ['event_property seats:10 (a key only beta has)', ['event_property', 'contains', 'seats:1'], 0],
    ['event_property plan:pro (beta v3 sent it too)', ['event_property', 'is', 'plan:pro'], 2],
    ['exit_link to beta.example (beta v1 clicked it)', ['exit_link', 'contains', 'beta'], 0],
    ['page /old (beta only)', ['page', 'is', '/old'], 0],
    ['country FR (beta only)', ['country', 'is', 'FR'], 0],
  ])('filter %s: pageviews of alpha rows only', async (_, filter, pageviews) => {
    const body = await askAlpha('POST', '/v1/query', {
      body: { date_range: RANGE, metrics: ['pageviews'], filters: [filter] },
    });
    expect(body.data[0].metrics.pageviews).toBe(pageviews);
  });

  it("`all` starts at alpha's first event, not beta's older one", async () => {
    const body = await askAlpha('POST', '/v1/query', { body: { date_range: 'all', metrics: ['pageviews'] } });
    expect(body.meta.date_range[0]).toBe('2026-03-01');
    expect(body.data[0].metrics.pageviews).toBe(3);
  });

  it("alpha's key cannot name beta", async () => {
    await expectForbiddenForAlphaKey('POST', '/v1/query', { body: { date_range: RANGE } });
  });
});

describe('GET /v1/events...', () => {
  const window = { start: RANGE[0]!, end: RANGE[1]! };

  it("lists alpha's custom events with alpha's counts", async () => {
    const body = await askAlpha('GET', '/v1/events', { query: window });
    expect(body.data).toEqual([{ name: 'signup', count: 1, visitors: 1, has_properties: true }]);
  });

  it("property keys of signup: alpha's only (beta adds seats)", async () => {
    const body = await askAlpha('GET', '/v1/events/signup/properties', { query: window });
    expect(body.data).toEqual(['plan']);
  });

  it("values of plan with revenue: beta's v1 and its 9000 never count", async () => {
    const body = await askAlpha('GET', '/v1/events/signup/properties/plan', {
      query: { ...window, include_revenue: 'true' },
    });
    expect(body.data).toEqual([{ value: 'pro', count: 1, visitors: 1, revenue: 1000 }]);
    const seats = await askAlpha('GET', '/v1/events/signup/properties/seats', { query: window });
    expect(seats.data).toEqual([]);
  });

  it("alpha's key cannot name beta", async () => {
    await expectForbiddenForAlphaKey('GET', '/v1/events', { query: window });
    await expectForbiddenForAlphaKey('GET', '/v1/events/signup/properties', { query: window });
    await expectForbiddenForAlphaKey('GET', '/v1/events/signup/properties/plan', { query: window });
  });
});

describe('POST /v1/journeys/*', () => {
  it("list: alpha's two visitors with alpha's aggregates", async () => {
    const body = await askAlpha('POST', '/v1/journeys/list', { body: { date_range: RANGE, sort_by: 'pageviews' } });
    expect(body.pagination.total).toBe(2);
    expect(
      body.data.map((v: Record<string, unknown>) => [
        v.visitor_id,
        v.pageview_count,
        v.session_count,
        v.event_count,
        v.total_revenue_cents,
        v.country,
        v.first_seen,
        v.entry_page,
        v.first_referrer,
      ]),
    ).toEqual([
      ['v1', 2, 1, 1, 1000, 'US', '2026-03-01 10:00:00', '/', 'google.com'],
      ['v2', 1, 1, 0, 0, 'DE', '2026-03-02 09:00:00', '/', '(direct)'],
    ]);
  });

  it('list filters that only beta rows would satisfy find nobody', async () => {
    for (const filter of [
      ['event_property', 'is', 'plan:enterprise'],
      ['country', 'is', 'FR'],
      ['page', 'is', '/old'],
    ]) {
      const body = await askAlpha('POST', '/v1/journeys/list', { body: { date_range: 'all', filters: [filter] } });
      expect(body.pagination.total, JSON.stringify(filter)).toBe(0);
    }
  });

  it("timeline of v1: alpha's four items, none of beta's seven", async () => {
    const body = await askAlpha('POST', '/v1/journeys/timeline', { body: { visitor_id: 'v1', date_range: 'all' } });
    expect(body.data.map((i: Record<string, unknown>) => [i.timestamp, i.type])).toEqual([
      ['2026-03-01 10:10:00', 'revenue'],
      ['2026-03-01 10:06:00', 'event'],
      ['2026-03-01 10:05:00', 'pageview'],
      ['2026-03-01 10:00:00', 'pageview'],
    ]);
    expect(body.data[0].amount_cents).toBe(1000);
    expect(body.data[1].event_properties).toBe('{"plan":"pro"}');
  });

  it("stats of v1: all-time figures of alpha (beta's v1 is older and bigger)", async () => {
    const body = await askAlpha('POST', '/v1/journeys/stats', { body: { visitor_id: 'v1' } });
    expect(body.data).toMatchObject({
      visitor_id: 'v1',
      first_seen: '2026-03-01 10:00:00',
      last_seen: '2026-03-01 10:10:00',
      total_sessions: 1,
      total_pageviews: 2,
      total_events: 1,
      total_revenue_cents: 1000,
      country: 'US',
      browser: 'Chrome',
      entry_page: '/',
      source: 'google.com',
      utm_source: 'google',
    });
  });

  it('activity of v1: one bucket, Sunday 10:00 with 2 pageviews', async () => {
    const body = await askAlpha('POST', '/v1/journeys/activity', { body: { visitor_id: 'v1' } });
    expect(body.data).toEqual([{ day_of_week: 7, hour_of_day: 10, pageviews: 2, unique_visitors: 1 }]);
  });

  it("dev rows: beta's dev row of v1 is not alpha's", async () => {
    const list = await askAlpha('POST', '/v1/journeys/list', { body: { date_range: RANGE, is_dev: true } });
    expect(list.pagination.total).toBe(0);
    const stats = await api.request('POST', '/v1/journeys/stats', {
      token: alphaKey,
      body: { domain: A, visitor_id: 'v1', is_dev: true },
    });
    expect(stats.status).toBe(404);
  });

  it('a visitor only beta has is a 404 for alpha, on every visitor endpoint', async () => {
    for (const path of ['/v1/journeys/timeline', '/v1/journeys/stats', '/v1/journeys/activity']) {
      for (const token of [alphaKey, bothToken]) {
        const body = { domain: A, visitor_id: 'v3', ...(path.endsWith('timeline') ? { date_range: 'all' } : {}) };
        const res = await api.request('POST', path, { token, body });
        expect(res.status, path).toBe(404);
      }
    }
    const own = await api.request('POST', '/v1/journeys/stats', {
      token: betaKey,
      body: { domain: B, visitor_id: 'v3' },
    });
    expect(own.status).toBe(200);
  });

  it("alpha's key cannot name beta", async () => {
    await expectForbiddenForAlphaKey('POST', '/v1/journeys/list', { body: {} });
    await expectForbiddenForAlphaKey('POST', '/v1/journeys/timeline', { body: { visitor_id: 'v1' } });
    await expectForbiddenForAlphaKey('POST', '/v1/journeys/stats', { body: { visitor_id: 'v1' } });
    await expectForbiddenForAlphaKey('POST', '/v1/journeys/activity', { body: { visitor_id: 'v1' } });
  });
});

describe('annotations', () => {
  it('each domain lists only its own; an id of one domain is a 404 under the other; a foreign domain is a 403', async () => {
    const alphaNote = await api.request('POST', '/v1/annotations', {
      token: alphaKey,
      body: { domain: A, date: '2026-03-01', title: 'alpha launch' },
    });
    const betaNote = await api.request('POST', '/v1/annotations', {
      token: betaKey,
      body: { domain: B, date: '2026-03-01', title: 'beta launch' },
    });
    expect([alphaNote.status, betaNote.status]).toEqual([201, 201]);

    const listed = await askAlpha('GET', '/v1/annotations', { query: {} });
    expect(listed.data.map((a: { title: string }) => a.title)).toEqual(['alpha launch']);

    // The personal token may act on both domains, but an id belongs to one: beta's id under alpha is not found.
    const crossed = await api.request('DELETE', `/v1/annotations/${betaNote.body.id}`, {
      token: bothToken,
      query: { domain: A },
    });
    expect(crossed.status).toBe(404);
    const byAlphaKey = await api.request('DELETE', `/v1/annotations/${betaNote.body.id}`, {
      token: alphaKey,
      query: { domain: B },
    });
    expect(byAlphaKey.status).toBe(403);
    await expectForbiddenForAlphaKey('GET', '/v1/annotations', { query: {} });
    await expectForbiddenForAlphaKey('POST', '/v1/annotations', { body: { date: '2026-03-01', title: 'sneaky' } });

    const betaList = await api.request('GET', '/v1/annotations', { token: betaKey, query: { domain: B } });
    expect(betaList.body.data.map((a: { title: string }) => a.title)).toEqual(['beta launch']);
  });
});
