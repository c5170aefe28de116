import createClient from 'openapi-fetch';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import type { components, paths } from '../../dashboard/api-types.js';

// A client generated from the OpenAPI document (openapi-typescript types, openapi-fetch calls) calls every
// operation of the API. The type check (`npm run typecheck`) proves the document types what a caller writes; the
// run proves the server answers those calls as typed.

let api: TestApi;
let client: ReturnType<typeof createClient<paths>>;

beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(shopEvents);
  const { token } = await api.createKey({ domains: ['shop.test'], scopes: ['analytics:read', 'analytics:write'] });
  client = createClient<paths>({ baseUrl: api.url, headers: { Authorization: `Bearer ${token}` } });
});
afterAll(() => api?.close());

const range: [string, string] = [SHOP_RANGE[0], SHOP_RANGE[1]];

it('calls every operation with typed requests and reads typed answers', async () => {
  const query = await client.POST('/v1/query', {
    body: {
      metrics: ['visitors', 'revenue'],
      dimensions: ['page'],
      date_range: range,
      include_revenue: true,
      sort: { field: 'visitors', order: 'desc' },
    },
  });
  const rows: components['schemas']['QueryRow'][] = query.data!.data;
  expect(rows.length).toBeGreaterThan(0);
  expect(typeof rows[0]!.metrics.visitors).toBe('number');

  const list = await client.POST('/v1/journeys/list', {
    body: { domain: 'shop.test', date_range: range, sort_by: 'pageviews', limit: 10 },
  });
  const visitors: components['schemas']['Visitor'][] = list.data!.data;
  expect(visitors.map((v) => v.visitor_id)).toContain('v1');

  const timeline = await client.POST('/v1/journeys/timeline', {
    body: { domain: 'shop.test', visitor_id: 'v1', date_range: range, include_auto_events: true },
  });
  const items: components['schemas']['TimelineItem'][] = timeline.data!.data;
  // The union narrows on `type`, as a caller's switch would.
  const kinds = new Set<string>();
  for (const item of items) {
    switch (item.type) {
      case 'pageview':
        kinds.add(`pageview:${item.url_path}`);
        break;
      case 'revenue':
        kinds.add(`revenue:${item.amount_cents}`);
        break;
      case 'event':
      case 'auto':
        kinds.add(`${item.type}:${item.event_name}`);
        break;
    }
  }
  expect(kinds).toEqual(new Set(['pageview:/', 'pageview:/pricing', 'event:signup', 'auto:exit_link', 'revenue:5000']));

  const stats = await client.POST('/v1/journeys/stats', { body: { domain: 'shop.test', visitor_id: 'v1' } });
  expect(stats.data!.data.total_revenue_cents).toBe(5000);
  const activity = await client.POST('/v1/journeys/activity', { body: { domain: 'shop.test', visitor_id: 'v1' } });
  expect(activity.data!.data.every((b) => b.day_of_week >= 1 && b.day_of_week <= 7)).toBe(true);

  const events = await client.GET('/v1/events', { params: { query: { start: range[0], end: range[1] } } });
  expect(events.data!.data.map((e) => e.name)).toContain('signup');
  const keys = await client.GET('/v1/events/{name}/properties', {
    params: { path: { name: 'signup' }, query: { start: range[0], end: range[1] } },
  });
  expect(keys.data!.data).toEqual(['plan']);
  const values = await client.GET('/v1/events/{name}/properties/{key}', {
    params: {
      path: { name: 'signup', key: 'plan' },
      query: { start: range[0], end: range[1], include_revenue: 'true' },
    },
  });
  expect(values.data!.data.map((v) => v.value).sort()).toEqual(['free', 'pro']);

  const created = await client.POST('/v1/annotations', {
    body: { domain: 'shop.test', date: '2026-03-02', title: 'Launch' },
  });
  expect(created.response.status).toBe(201);
  const listed = await client.GET('/v1/annotations', { params: { query: { domain: 'shop.test' } } });
  expect(listed.data!.data.map((a) => a.title)).toContain('Launch');
  const deleted = await client.DELETE('/v1/annotations/{id}', {
    params: { path: { id: created.data!.id }, query: { domain: 'shop.test' } },
  });
  expect(deleted.data!.success).toBe(true);
});

it('reads the typed error of a failed call', async () => {
  const missing = await client.POST('/v1/journeys/stats', { body: { domain: 'shop.test', visitor_id: 'nobody' } });
  expect(missing.response.status).toBe(404);
  const error: components['schemas']['Error'] | undefined = missing.error;
  expect(error?.error).toBe('not_found');
  expect(missing.response.headers.get('x-request-id')).toBeTruthy();
});
