import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// GET /v1/events, /v1/events/:name/properties and /v1/events/:name/properties/:key through HTTP.
// shop.test is the shared fixture; events.test below adds cases it lacks (no properties, typed values,
// odd keys, dev rows).

const day = '2026-03-01';
const ev = (
  visitor: string,
  minute: number,
  name: string,
  props?: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  domain: 'events.test',
  timestamp: `${day}T10:${String(minute).padStart(2, '0')}:00Z`,
  type: 'event',
  visitor_id: visitor,
  session_id: `s-${visitor}`,
  url_path: '/',
  event_name: name,
  ...(props ? { event_properties: props } : {}),
  ...extra,
});
const eventsTest = [
  ev('u1', 1, 'newsletter'),
  ev('u2', 2, 'newsletter', {}),
  ev('u1', 3, 'purchase', { plan: 'pro', n: 3, ok: true }),
  ev('u2', 4, 'purchase', { plan: 'pro' }),
  ev('u1', 5, 'purchase', { plan: 'basic' }),
  ev('u3', 6, 'odd', { "we'ird.key": 'v%_' }),
  ev('u9', 7, 'devonly', { a: 'b' }, { is_dev: true }),
  {
    domain: 'events.test',
    timestamp: `${day}T10:08:00Z`,
    type: 'auto',
    visitor_id: 'u1',
    session_id: 's-u1',
    url_path: '/',
    event_name: 'click',
    event_properties: { plan: 'x' },
  },
  {
    domain: 'events.test',
    timestamp: `${day}T10:09:00Z`,
    type: 'revenue',
    visitor_id: 'u1',
    transaction_id: 'r1',
    amount_cents: 1000,
    currency: 'EUR',
    revenue_event: 'payment',
  },
  {
    domain: 'events.test',
    timestamp: `${day}T10:10:00Z`,
    type: 'revenue',
    visitor_id: 'u2',
    transaction_id: 'r2',
    amount_cents: 300,
    currency: 'EUR',
    revenue_event: 'payment',
  },
];

let api: TestApi;
let shop: string;
let events: string;
const range = { start: SHOP_RANGE[0], end: SHOP_RANGE[1] };

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents([...shopEvents, ...eventsTest])).rejected).toEqual([]);
  shop = (await api.createKey({ domains: ['shop.test'] })).token;
  events = (await api.createKey({ domains: ['events.test'] })).token;
});
afterAll(() => api?.close());

const get = async (token: string, path: string, query: Record<string, string> = range) => {
  const res = await api.request('GET', path, { token, query });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe('GET /v1/events', () => {
  it('lists custom events (not auto, not dev, not other domains) by count, then name', async () => {
    // shop.test: signup by v1 and v4; download by v3. other.test's signup is not counted.
    const body = await get(shop, '/v1/events');
    expect(body.data).toEqual([
      { name: 'signup', count: 2, visitors: 2, has_properties: true },
      { name: 'download', count: 1, visitors: 1, has_properties: true },
    ]);
    expect(body.meta).toEqual({
      domain: 'shop.test',
      date_range: ['2026-03-01', '2026-03-03'],
      query_ms: expect.any(Number),
    });
  });

  it('has_properties is false for events without properties or with {}', async () => {
    const body = await get(events, '/v1/events');
    expect(body.data).toEqual([
      { name: 'purchase', count: 3, visitors: 2, has_properties: true },
      { name: 'newsletter', count: 2, visitors: 2, has_properties: false },
      { name: 'odd', count: 1, visitors: 1, has_properties: true },
    ]);
  });

  it('honours limit and the range; presets are UTC days ending today', async () => {
    expect((await get(events, '/v1/events', { ...range, limit: '1' })).data).toHaveLength(1);
    expect((await get(events, '/v1/events', { start: '2026-03-02', end: '2026-03-03' })).data).toEqual([]);
    const week = await get(events, '/v1/events', { period: '7d' });
    expect(week.data).toEqual([]);
    const [start, end] = week.meta.date_range;
    expect(end).toBe(new Date().toISOString().slice(0, 10));
    expect((Date.parse(end) - Date.parse(start)) / 86_400_000).toBe(6);
    const all = await get(events, '/v1/events', { period: 'all' });
    expect(all.meta.date_range[0]).toBe('2026-03-01');
    expect(all.data).toHaveLength(3);
  });

  it('refuses days outside 1970-01-01 to 2099-12-31 with a 400, as /v1/query does', async () => {
    for (const [start, end] of [
      ['0124-11-25', '2000-01-01'],
      ['1969-12-31', '2026-03-03'],
      ['2026-03-01', '2100-01-01'],
    ]) {
      for (const path of ['/v1/events', '/v1/events/purchase/properties', '/v1/events/purchase/properties/plan']) {
        const res = await api.request('GET', path, { token: events, query: { start: start!, end: end! } });
        expect(res.status, `${path} ${start} ${end}`).toBe(400);
        expect(res.body).toMatchObject({
          error: 'invalid_request',
          message: expect.stringContaining('1970-01-01 and 2099-12-31'),
        });
      }
    }
  });
});

describe('GET /v1/events/:name/properties', () => {
  it('lists the keys seen on the event, most used first', async () => {
    const body = await get(events, '/v1/events/purchase/properties');
    expect(body.data).toEqual(['plan', 'n', 'ok']);
    expect(body.meta).toEqual({
      domain: 'events.test',
      event: 'purchase',
      date_range: ['2026-03-01', '2026-03-03'],
      query_ms: expect.any(Number),
    });
    expect((await get(shop, '/v1/events/signup/properties')).data).toEqual(['plan']);
  });

  it('an unknown event or one without properties gives an empty list', async () => {
    expect((await get(events, '/v1/events/nope/properties')).data).toEqual([]);
    expect((await get(events, '/v1/events/newsletter/properties')).data).toEqual([]);
  });

  it('takes odd keys and names as data', async () => {
    expect((await get(events, `/v1/events/${encodeURIComponent('odd')}/properties`)).data).toEqual(["we'ird.key"]);
    expect((await get(events, `/v1/events/${encodeURIComponent("x' OR '1'='1")}/properties`)).data).toEqual([]);
  });
});

describe('GET /v1/events/:name/properties/:key', () => {
  it('breaks a property down by value, by count then value', async () => {
    const body = await get(shop, '/v1/events/signup/properties/plan');
    expect(body.data).toEqual([
      { value: 'free', count: 1, visitors: 1 },
      { value: 'pro', count: 1, visitors: 1 },
    ]);
    expect(body.meta).toEqual({
      domain: 'shop.test',
      event: 'signup',
      property: 'plan',
      date_range: ['2026-03-01', '2026-03-03'],
      query_ms: expect.any(Number),
    });
  });

  it('adds the revenue of the visitors who sent each value with include_revenue=true', async () => {
    // shop.test: pro by v1 (5000), free by v4 (2500). events.test: pro by u1 and u2 (1000 + 300), basic by u1.
    expect((await get(shop, '/v1/events/signup/properties/plan', { ...range, include_revenue: 'true' })).data).toEqual([
      { value: 'free', count: 1, visitors: 1, revenue: 2500 },
      { value: 'pro', count: 1, visitors: 1, revenue: 5000 },
    ]);
    expect(
      (await get(events, '/v1/events/purchase/properties/plan', { ...range, include_revenue: 'true' })).data,
    ).toEqual([
      { value: 'pro', count: 2, visitors: 2, revenue: 1300 },
      { value: 'basic', count: 1, visitors: 1, revenue: 1000 },
    ]);
  });

  it('numbers and booleans were stored as their text', async () => {
    expect((await get(events, '/v1/events/purchase/properties/n')).data).toEqual([
      { value: '3', count: 1, visitors: 1 },
    ]);
    expect((await get(events, '/v1/events/purchase/properties/ok')).data).toEqual([
      { value: 'true', count: 1, visitors: 1 },
    ]);
  });

  it('odd keys, % and _ are data', async () => {
    const body = await get(events, `/v1/events/odd/properties/${encodeURIComponent("we'ird.key")}`);
    expect(body.data).toEqual([{ value: 'v%_', count: 1, visitors: 1 }]);
    expect(body.meta.property).toBe("we'ird.key");
    expect((await get(events, '/v1/events/odd/properties/we')).data).toEqual([]);
  });
});
