import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseSchemas } from '../../shared/http/response-schemas.js';
import { routes, type RouteKey } from '../../shared/routes.js';
import { openApiJson } from '../../local/server/openapi-document.js';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The OpenAPI document is generated from the schemas the handlers enforce; these tests keep the committed copy
// fresh and prove that real answers match the documented response shapes.

let api: TestApi;
let token: string;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(shopEvents);
  token = (await api.createKey({ domains: ['shop.test'] })).token;
});
afterAll(() => api?.close());

describe('the OpenAPI document', () => {
  it('docs/openapi.json is what `npm run openapi` generates now', async () => {
    expect(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')).toBe(await openApiJson());
  });

  it('is served at GET /openapi.json and names every route of the route table', async () => {
    const res = await api.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    for (const route of Object.values(routes)) {
      expect(res.body.paths[route.path][route.method.toLowerCase()].operationId).toBe(route.name);
    }
  });
});

describe('real responses match the documented schemas', () => {
  const range = { date_range: SHOP_RANGE };
  const calls: [RouteKey, string, string, { body?: unknown; query?: Record<string, string> }][] = [
    ['query', 'POST', '/v1/query', { body: { ...range, metrics: ['visitors', 'revenue'], dimensions: ['page'], include_revenue: true } }],
    ['eventsList', 'GET', '/v1/events', { query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1] } }],
    ['eventProperties', 'GET', '/v1/events/signup/properties', { query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1] } }],
    ['eventPropertyValues', 'GET', '/v1/events/signup/properties/plan', { query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1], include_revenue: 'true' } }],
    ['journeysList', 'POST', '/v1/journeys/list', { body: { domain: 'shop.test', ...range } }],
    ['journeysTimeline', 'POST', '/v1/journeys/timeline', { body: { domain: 'shop.test', visitor_id: 'v1', ...range, include_auto_events: true } }],
    ['journeysStats', 'POST', '/v1/journeys/stats', { body: { domain: 'shop.test', visitor_id: 'v1' } }],
    ['journeysActivity', 'POST', '/v1/journeys/activity', { body: { domain: 'shop.test', visitor_id: 'v1' } }],
    ['annotationsCreate', 'POST', '/v1/annotations', { body: { domain: 'shop.test', date: '2026-03-01', title: 'Launch' } }],
    ['annotationsList', 'GET', '/v1/annotations', { query: { domain: 'shop.test' } }],
  ];

  it.each(calls)('%s', async (key, method, path, options) => {
    const res = await api.request(method, path, { token, ...options });
    expect(res.status).toBe(key === 'annotationsCreate' ? 201 : 200);
    const parsed = responseSchemas[key].safeParse(res.body);
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it('annotationsDelete', async () => {
    const created = await api.request('POST', '/v1/annotations', { token, body: { domain: 'shop.test', date: '2026-03-02', title: 'x' } });
    const res = await api.request('DELETE', `/v1/annotations/${created.body.id}`, { token, query: { domain: 'shop.test' } });
    expect(responseSchemas.annotationsDelete.safeParse(res.body).success).toBe(true);
  });
});
