import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Every 400 of docs/API.md for POST /v1/query and the custom-event endpoints, with `details` naming the
// bad field. No data is needed: validation happens before any engine runs.

let api: TestApi;
let project: string;
let personal: string;

beforeAll(async () => {
  api = await startTestApi();
  project = (await api.createKey({ domains: ['shop.test'] })).token;
  personal = (await api.createKey({ type: 'personal', domains: ['shop.test', 'blog.test'] })).token;
});
afterAll(() => api?.close());

describe('POST /v1/query answers 400 with details', () => {
  it.each([
    ['unknown timezone', { timezone: 'Mars/Olympus' }, 'timezone'],
    ['start after end', { date_range: ['2026-03-02', '2026-03-01'] }, 'date_range'],
    ['not a real date', { date_range: ['2026-02-30', '2026-03-01'] }, 'date_range.0'],
    ['unknown preset', { date_range: '5d' }, 'date_range'],
    ['revenue metric without include_revenue', { metrics: ['revenue'] }, 'metrics.0'],
    [
      'conversion_rate without include_revenue',
      { metrics: ['visitors', 'conversion_rate'], include_revenue: false },
      'metrics.1',
    ],
    ['sort by revenue without include_revenue', { sort: { field: 'revenue' } }, 'sort.field'],
    ['three dimensions', { dimensions: ['page', 'country', 'city'] }, 'dimensions'],
    ['unknown dimension', { dimensions: ['planet'] }, 'dimensions.0'],
    ['event with another dimension', { dimensions: ['event', 'page'] }, 'dimensions'],
    ['repeated dimension', { dimensions: ['page', 'page'] }, 'dimensions'],
    ['unknown metric', { metrics: ['sessions'] }, 'metrics.0'],
    ['no metrics', { metrics: [] }, 'metrics'],
    ['unknown filter field', { filters: [['planet', 'is', 'x']] }, 'filters.0.0'],
    ['unknown operator', { filters: [['page', 'matches', 'x']] }, 'filters.0.1'],
    ['filter of two elements', { filters: [['page', 'is']] }, 'filters.0'],
    ['filter value not a string', { filters: [['page', 'is', 1]] }, 'filters.0.2'],
    ['empty filter value', { filters: [['page', 'is', '']] }, 'filters.0.2'],
    ['event_property without key:value', { filters: [['event_property', 'is', 'plan']] }, 'filters.0.2'],
    ['is with only commas', { filters: [['page', 'is', ',,']] }, 'filters.0.2'],
    ['NUL in a filter value', { filters: [['page', 'is', 'a\u0000b']] }, 'filters.0.2'],
    ['unknown sort field', { sort: { field: 'city' } }, 'sort.field'],
    ['unknown sort order', { sort: { field: 'visitors', order: 'up' } }, 'sort.order'],
    ['string limit', { limit: '10' }, 'limit'],
    ['limit 0', { limit: 0 }, 'limit'],
    ['limit 1001', { limit: 1001 }, 'limit'],
    ['fractional limit', { limit: 1.5 }, 'limit'],
    ['negative offset', { offset: -1 }, 'offset'],
    ['string include_revenue', { include_revenue: 'true' }, 'include_revenue'],
    ['unknown field', { metric: ['visitors'] }, 'metric'],
    ['upper-case domain', { domain: 'Shop.Test' }, 'domain'],
  ])('%s', async (_, body, path) => {
    const res = await api.request('POST', '/v1/query', { token: project, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
    expect(typeof res.body.message).toBe('string');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(path);
  });

  it.each([
    ['an array', '[]'],
    ['a string', '"x"'],
    ['null', 'null'],
    ['malformed JSON', '{"metrics": ['],
    ['empty', ''],
  ])('a body that is %s', async (_, rawBody) => {
    const res = await api.request('POST', '/v1/query', { token: project, rawBody });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body).sort()).toEqual(['details', 'error', 'message']);
  });

  it('a personal token must name the domain (400) and one of its own (403)', async () => {
    const missing = await api.request('POST', '/v1/query', { token: personal, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details[0].path).toBe('domain');
    const foreign = await api.request('POST', '/v1/query', { token: personal, body: { domain: 'other.test' } });
    expect(foreign.status).toBe(403);
    const own = await api.request('POST', '/v1/query', { token: personal, body: { domain: 'blog.test' } });
    expect(own.status).toBe(200);
    expect(own.body.meta.domain).toBe('blog.test');
  });

  it('a project key may omit its domain but not name another', async () => {
    expect((await api.request('POST', '/v1/query', { token: project, body: {} })).status).toBe(200);
    expect((await api.request('POST', '/v1/query', { token: project, body: { domain: 'blog.test' } })).status).toBe(
      403,
    );
  });
});

describe('GET /v1/events... answers 400 with details', () => {
  it.each([
    ['/v1/events', { start: '2026-03-01' }, 'end'],
    ['/v1/events', { end: '2026-03-01' }, 'start'],
    ['/v1/events', { start: '2026-03-02', end: '2026-03-01' }, 'start'],
    ['/v1/events', { start: '2026-02-30', end: '2026-03-01' }, 'start'],
    ['/v1/events', { period: '5d' }, 'period'],
    ['/v1/events', { limit: '0' }, 'limit'],
    ['/v1/events', { limit: '1001' }, 'limit'],
    ['/v1/events', { limit: 'ten' }, 'limit'],
    ['/v1/events', { planet: 'x' }, 'planet'],
    ['/v1/events/signup/properties', { limit: '-1' }, 'limit'],
    ['/v1/events/signup/properties/plan', { include_revenue: 'yes' }, 'include_revenue'],
  ])('%s %o', async (path, query, field) => {
    const res = await api.request('GET', path, { token: project, query });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it('a personal token must send domain', async () => {
    const res = await api.request('GET', '/v1/events', { token: personal });
    expect(res.status).toBe(400);
    expect((await api.request('GET', '/v1/events', { token: personal, query: { domain: 'shop.test' } })).status).toBe(
      200,
    );
  });
});
