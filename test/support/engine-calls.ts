import fc from 'fast-check';
import { metrics, dimensions, queryFilterFields } from '../../shared/requests/query.js';
import { filterOperators } from '../../shared/requests/filters.js';
import { journeyFilterFields, visitorSortFields } from '../../shared/requests/journeys.js';
import { presets } from '../../shared/time/date-range.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { domain as generatedDomain, filterPool, generatedEvents, pageFilterPool } from './generated-sessions.js';
import type { TestApi } from './test-api.js';

// Seeded random requests over every endpoint for the suites that answer each request on two engines and compare:
// every metric, dimension, filter field and operator, time zones with DST and half-hour offsets, presets and
// explicit ranges, sorts, pages, the journeys filters and bounds, and the custom-event endpoints, on two domains:
// the generated sessions (moved to end two days ago, so presets reach them) and the shop fixture.

export const SHOP = 'shop.test';
const DAY = 86_400_000;
/** The generated sessions (March 2026) are moved so they end two days ago: presets reach them. */
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
const shiftMs = today - 12 * DAY - Date.parse('2026-03-01T00:00:00Z');
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dataDays = Array.from({ length: 14 }, (_, i) => dayText(today - 13 * DAY + i * DAY));
const ZONES = [
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Asia/Kolkata',
  'Australia/Adelaide',
  'Pacific/Chatham',
  'America/St_Johns',
  'Asia/Kathmandu',
];

function shifted(events: unknown[]): unknown[] {
  return events.map((e) => {
    const event = e as { timestamp: string };
    return { ...event, timestamp: new Date(Date.parse(event.timestamp) + shiftMs).toISOString() };
  });
}

/** The generated sessions, ending two days before today. */
export const generated = shifted(generatedEvents());
const generatedVisitors = [...new Set(generated.map((e) => (e as { visitor_id: string }).visitor_id))].sort();

export interface Call {
  method: 'GET' | 'POST';
  path: string;
  domain: string;
  body?: Record<string, unknown>;
  query?: Record<string, string>;
}

const range = (days: readonly string[]) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...presets) },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom(...days), fc.constantFrom(...days))
        .map(([a, b]) => (a <= b ? [a, b] : [b, a])),
    },
  );
const shopDays = ['2026-02-26', '2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];

/** Filters that match rows (from the pools) or any field and operator with values that may match nothing. */
function filters(fields: readonly string[]) {
  const pool = [...filterPool, ...pageFilterPool]
    .filter((f) => fields.includes(f.field))
    .map((f) => [f.field, f.operator, f.value]);
  const anyField = fc
    .tuple(
      fc.constantFrom(...fields),
      fc.constantFrom(...filterOperators),
      fc.constantFrom('/', '/pricing', 'pro', 'US', 'o', "o'k", '(not set)', '(direct)', 'google.com', 'Chr'),
    )
    .map(([field, operator, value]) => [field, operator, field === 'event_property' ? `plan:${value}` : value]);
  const filter = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: anyField });
  // Half without filters, so most answers have rows to compare.
  return fc.oneof(fc.constant([]), fc.array(filter, { minLength: 1, maxLength: 2 }));
}

function queryCall(domain: string, days: readonly string[]): fc.Arbitrary<Call> {
  return fc.boolean().chain((includeRevenue) =>
    fc
      .record({
        metrics: fc.uniqueArray(
          fc.constantFrom(
            ...metrics.filter((m) => includeRevenue || !['revenue', 'conversions', 'conversion_rate'].includes(m)),
          ),
          { minLength: 1, maxLength: 7 },
        ),
        dimensions: fc.oneof(
          { weight: 1, arbitrary: fc.constant(['event']) },
          {
            weight: 5,
            arbitrary: fc.uniqueArray(fc.constantFrom(...dimensions.filter((d) => d !== 'event')), { maxLength: 2 }),
          },
        ),
        date_range: range(days),
        filters: filters(queryFilterFields),
        timezone: fc.constantFrom(...ZONES),
        sort: fc.option(
          fc.record({
            field: fc.constantFrom('visitors', 'pageviews', 'bounce_rate'),
            order: fc.constantFrom('asc', 'desc'),
          }),
          { nil: undefined },
        ),
        limit: fc.integer({ min: 1, max: 50 }),
        offset: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 })),
      })
      .map((b) => ({
        method: 'POST' as const,
        path: '/v1/query',
        domain,
        body: { domain, include_revenue: includeRevenue, ...b, ...(b.sort ? {} : { sort: undefined }) },
      })),
  );
}

function visitorListCall(domain: string, days: readonly string[]): fc.Arbitrary<Call> {
  const bound = fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined });
  return fc
    .record({
      date_range: range(days),
      filters: filters(journeyFilterFields),
      pageviews_gt: bound,
      pageviews_lt: bound,
      sessions_gt: bound,
      sessions_lt: bound,
      revenue_gt: fc.option(fc.integer({ min: -2000, max: 3000 }), { nil: undefined }),
      has_revenue: fc.option(fc.boolean(), { nil: undefined }),
      first_purchase: fc.option(fc.boolean(), { nil: undefined }),
      sort_by: fc.constantFrom(...visitorSortFields),
      sort_order: fc.constantFrom('asc', 'desc'),
      limit: fc.integer({ min: 1, max: 30 }),
      offset: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100 })),
      timezone: fc.constantFrom(...ZONES),
      is_dev: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map((b) => ({ method: 'POST' as const, path: '/v1/journeys/list', domain, body: clean({ domain, ...b }) }));
}

function visitorCall(domain: string, visitors: readonly string[], days: readonly string[]): fc.Arbitrary<Call> {
  const visitor = fc.constantFrom(...visitors, 'nobody');
  const timeline = fc
    .record({
      visitor_id: visitor,
      date_range: fc.oneof(fc.constantFrom('all', '12mo', '30d'), range(days)),
      limit: fc.integer({ min: 1, max: 40 }),
      offset: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 })),
      timezone: fc.constantFrom(...ZONES),
      is_dev: fc.option(fc.boolean(), { nil: undefined }),
      include_auto_events: fc.option(fc.boolean(), { nil: undefined }),
    })
    .map((b) => ({ method: 'POST' as const, path: '/v1/journeys/timeline', domain, body: clean({ domain, ...b }) }));
  const whole = fc
    .record({
      path: fc.constantFrom('/v1/journeys/stats', '/v1/journeys/activity'),
      visitor_id: visitor,
      is_dev: fc.option(fc.boolean(), { nil: undefined }),
      timezone: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
    })
    .map(({ path, ...b }) => ({ method: 'POST' as const, path, domain, body: clean({ domain, ...b }) }));
  return fc.oneof(timeline, whole);
}

function eventsCall(domain: string, days: readonly string[]): fc.Arbitrary<Call> {
  const window = fc.oneof(
    fc.constantFrom(...presets).map((period) => ({ period })),
    fc
      .tuple(fc.constantFrom(...days), fc.constantFrom(...days))
      .map(([a, b]) => (a <= b ? { start: a, end: b } : { start: b, end: a })),
  );
  const limit = fc.option(fc.integer({ min: 1, max: 20 }).map(String), { nil: undefined });
  return fc
    .record({
      window,
      limit,
      path: fc.constantFrom(
        '/v1/events',
        '/v1/events/signup/properties',
        '/v1/events/download/properties',
        '/v1/events/signup/properties/plan',
        '/v1/events/download/properties/file',
        '/v1/events/exit_link/properties/url',
        '/v1/events/nothing/properties',
      ),
      revenue: fc.boolean(),
    })
    .map(({ window, limit, path, revenue }) => ({
      method: 'GET' as const,
      path,
      domain,
      query: clean({
        domain,
        ...window,
        limit,
        ...(revenue && path.split('/').length === 6 ? { include_revenue: 'true' } : {}),
      }) as Record<string, string>,
    }));
}

function clean<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

const perDomain = (domain: string, visitors: readonly string[], days: readonly string[]) =>
  fc.oneof(
    { weight: 10, arbitrary: queryCall(domain, days) },
    { weight: 4, arbitrary: visitorListCall(domain, days) },
    { weight: 4, arbitrary: visitorCall(domain, visitors, days) },
    { weight: 3, arbitrary: eventsCall(domain, days) },
  );

/** `count` calls drawn with `seed`: three of the generated domain for one of the shop's. */
export function engineCalls(count: number, seed: number): Call[] {
  return fc.sample(
    fc.oneof(
      { weight: 3, arbitrary: perDomain(generatedDomain, generatedVisitors, dataDays) },
      { weight: 1, arbitrary: perDomain(SHOP, ['v1', 'v2', 'v3', 'v4'], shopDays) },
    ),
    { seed, numRuns: count },
  );
}

/** Both domains' events, as the suites import them. */
export const engineCallEvents = { generated, shop: shopEvents };

/** One call through the local API: status, body without the engine's figures, and the bytes it reported. */
export async function sendCall(
  api: TestApi,
  call: Call,
  token: string,
): Promise<{ status: number; body: unknown; bytes: number }> {
  const res = await api.request(call.method, call.path, {
    token,
    ...(call.body ? { body: call.body } : {}),
    ...(call.query ? { query: call.query } : {}),
  });
  const bytes = Number((res.body as { meta?: { bytes_scanned?: number } }).meta?.bytes_scanned ?? 0);
  return { status: res.status, body: answer(res.body), bytes };
}

/** A body without the figures that measure the engine rather than answer the question. */
export function answer(body: unknown): unknown {
  if (body && typeof body === 'object' && 'meta' in body) {
    const { query_ms: _ms, bytes_scanned: _bytes, ...meta } = (body as { meta: Record<string, unknown> }).meta;
    return { ...body, meta };
  }
  return body;
}
