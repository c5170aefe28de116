import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorResponse } from '../support/http-assertions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Every 400 of the journeys endpoints (strict bodies: unknown fields, no coercion, bounds) with `details` naming
// the bad field, and the 403 for another domain. No data is needed: validation runs before any engine.

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  token = (await api.createKey({ domains: ['journeys.test'] })).token;
});
afterAll(() => api?.close());

async function expect400(path: string, body: unknown, field: string) {
  const res = await api.request('POST', path, { token, body });
  expectErrorResponse(res, 400, 'invalid_request');
  expect(res.body.details.map((d: { path: string }) => d.path)).toContain(field);
}

const list = { domain: 'journeys.test' };
const visitor = { domain: 'journeys.test', visitor_id: 'alice' };

describe('POST /v1/journeys/list answers 400 with details', () => {
  it.each([
    ['missing domain', { date_range: '7d' }, 'domain'],
    ['unknown field', { ...list, sort: 'last_seen' }, 'sort'],
    ['include_auto_events is a timeline field', { ...list, include_auto_events: true }, 'include_auto_events'],
    ['string where a number belongs', { ...list, pageviews_gt: '1' }, 'pageviews_gt'],
    ['string limit', { ...list, limit: '10' }, 'limit'],
    ['limit 0', { ...list, limit: 0 }, 'limit'],
    ['limit 101', { ...list, limit: 101 }, 'limit'],
    ['fractional limit', { ...list, limit: 2.5 }, 'limit'],
    ['negative offset', { ...list, offset: -1 }, 'offset'],
    ['fractional bound', { ...list, revenue_gt: 0.5 }, 'revenue_gt'],
    ['negative count bound', { ...list, sessions_lt: -1 }, 'sessions_lt'],
    ['string boolean', { ...list, has_revenue: 'true' }, 'has_revenue'],
    ['number boolean', { ...list, first_purchase: 1 }, 'first_purchase'],
    ['string is_dev', { ...list, is_dev: 'false' }, 'is_dev'],
    ['unknown sort_by', { ...list, sort_by: 'country' }, 'sort_by'],
    ['unknown sort_order', { ...list, sort_order: 'up' }, 'sort_order'],
    ['bad timezone', { ...list, timezone: 'Mars/Olympus' }, 'timezone'],
    ['not a real date', { ...list, date_range: ['2026-02-30', '2026-03-01'] }, 'date_range.0'],
    ['date with a time', { ...list, date_range: ['2026-03-01T00:00:00Z', '2026-03-02'] }, 'date_range.0'],
    ['start after end', { ...list, date_range: ['2026-03-02', '2026-03-01'] }, 'date_range'],
    ['unknown preset', { ...list, date_range: '5d' }, 'date_range'],
    ['unknown filter field', { ...list, filters: [['planet', 'is', 'x']] }, 'filters.0.0'],
    ['exit_link is a query filter only', { ...list, filters: [['exit_link', 'is', 'x']] }, 'filters.0.0'],
    ['unknown operator', { ...list, filters: [['page', 'matches', 'x']] }, 'filters.0.1'],
    ['event_property without key:value', { ...list, filters: [['event_property', 'is', 'plan']] }, 'filters.0.2'],
    ['filter value not a string', { ...list, filters: [['page', 'is', 1]] }, 'filters.0.2'],
  ])('%s', async (_, body, field) => {
    await expect400('/v1/journeys/list', body, field);
  });
});

describe('400 messages say what is accepted', () => {
  const message = async (method: 'GET' | 'POST', path: string, input: Record<string, unknown>) => {
    const res = await api.request(method, path, {
      token,
      ...(method === 'POST' ? { body: input } : { query: input as Record<string, string> }),
    });
    expectErrorResponse(res, 400, 'invalid_request');
    return res.body.message as string;
  };
  it('a missing field is required, with its type', async () => {
    expect(await message('POST', '/v1/journeys/list', { date_range: '7d' })).toContain(
      'domain: is required (a string)',
    );
  });
  it('filters in another form show the form', async () => {
    expect(await message('POST', '/v1/journeys/list', { ...list, filters: { page: '/pricing' } })).toContain(
      'filters: must be an array of [field, operator, value] filters, e.g. [["page", "is", "/pricing"]]',
    );
    expect(await message('POST', '/v1/query', { ...list, filters: [{ page: '/pricing' }] })).toContain(
      'filters.0: must be [field, operator, value], e.g. ["page", "is", "/pricing"]',
    );
  });
  it('a field the endpoint does not take names the fields it takes', async () => {
    const text = await message('GET', '/v1/events', { domain: 'journeys.test', timezone: 'UTC' });
    expect(text).toMatch(/^timezone: is not a known field \(this endpoint takes domain, [a-z_, ]+\)$/);
  });
});

describe('POST /v1/journeys/timeline answers 400 with details', () => {
  it.each([
    ['missing visitor_id', { domain: 'journeys.test' }, 'visitor_id'],
    ['empty visitor_id', { ...visitor, visitor_id: '' }, 'visitor_id'],
    ['numeric visitor_id', { ...visitor, visitor_id: 42 }, 'visitor_id'],
    ['unknown field', { ...visitor, filters: [] }, 'filters'],
    ['limit 0', { ...visitor, limit: 0 }, 'limit'],
    ['limit 1001', { ...visitor, limit: 1001 }, 'limit'],
    ['string limit', { ...visitor, limit: '100' }, 'limit'],
    ['negative offset', { ...visitor, offset: -5 }, 'offset'],
    ['string include_auto_events', { ...visitor, include_auto_events: 'true' }, 'include_auto_events'],
    ['bad timezone', { ...visitor, timezone: 'UTC+2' }, 'timezone'],
    ['bad date', { ...visitor, date_range: ['2026-13-01', '2026-13-02'] }, 'date_range.0'],
  ])('%s', async (_, body, field) => {
    await expect400('/v1/journeys/timeline', body, field);
  });
});

describe.each(['stats', 'activity'])('POST /v1/journeys/%s answers 400 with details', (endpoint) => {
  it.each([
    ['missing visitor_id', { domain: 'journeys.test' }, 'visitor_id'],
    ['missing domain', { visitor_id: 'alice' }, 'domain'],
    ['a range (all time only)', { ...visitor, date_range: '7d' }, 'date_range'],
    ['a time zone that is not one (timezone is an extension here)', { ...visitor, timezone: 'Mars/Base' }, 'timezone'],
    ['string is_dev', { ...visitor, is_dev: 'true' }, 'is_dev'],
  ])('%s', async (_, body, field) => {
    await expect400(`/v1/journeys/${endpoint}`, body, field);
  });
});

describe.each(['list', 'timeline', 'stats', 'activity'])('POST /v1/journeys/%s', (endpoint) => {
  const path = `/v1/journeys/${endpoint}`;
  const minimal = (domain: string) => (endpoint === 'list' ? { domain } : { domain, visitor_id: 'alice' });

  it('refuses a body that is not a JSON object', async () => {
    expectErrorResponse(await api.request('POST', path, { token, rawBody: '[]' }), 400, 'invalid_request');
    expectErrorResponse(await api.request('POST', path, { token, rawBody: '{"domain":' }), 400, 'invalid_request');
  });

  it('is a 403 for a domain the key does not hold', async () => {
    expectErrorResponse(await api.request('POST', path, { token, body: minimal('other.test') }), 403, 'forbidden');
  });

  it('is a 401 without a key', async () => {
    expectErrorResponse(await api.request('POST', path, { body: minimal('journeys.test') }), 401);
  });
});
