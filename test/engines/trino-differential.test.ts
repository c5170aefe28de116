import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJava } from '../../local/tools/trino-install.js';
import { installEngine } from '../../shared/engines/registry.js';
import { metrics, dimensions, queryFilterFields } from '../../shared/requests/query.js';
import { filterOperators } from '../../shared/requests/filters.js';
import { journeyFilterFields, visitorSortFields } from '../../shared/requests/journeys.js';
import { presets } from '../../shared/time/date-range.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { domain as generatedDomain, filterPool, generatedEvents, pageFilterPool } from '../support/generated-sessions.js';
import { rotatingToken } from '../support/rotating-token.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The cloud query path against the local one: every request below is answered twice by the same local API over
// the same imported store, once by DuckDB and once by the Lambdas' Athena engine through the real Athena SDK, the
// Athena emulator and a real Trino reading the store as Athena reads the bucket (tables from the stack's Glue
// definitions, partition projection, ZSTD Parquet). Status and body must be identical but for `query_ms` and
// `bytes_scanned`. The requests are seeded and random: every metric, dimension, filter field and operator, time
// zones with DST and half-hour offsets, presets and explicit ranges, sorts, pages, the journeys filters and bounds,
// and the custom-event endpoints, on two domains (so result reuse, which matches on query text, is exercised
// across domains).
//
// It needs Java 24+ for Trino; without one it is skipped with one line, unless TRINO_REQUIRED=1 (as in .ci/run),
// which turns the skip into a failure.

const java = findJava();
const required = process.env.TRINO_REQUIRED === '1';
if ('missing' in java) {
  if (required) throw new Error(`TRINO_REQUIRED=1 but ${java.missing}`);
  console.info(`Trino differential suite skipped: ${java.missing}`);
}

const SEED = 20261125;
const SHOP = 'shop.test';
const DAY = 86_400_000;
/** The generated sessions (March 2026) are moved so they end two days ago: presets reach them. */
const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
const shiftMs = today - 12 * DAY - Date.parse('2026-03-01T00:00:00Z');
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dataDays = Array.from({ length: 14 }, (_, i) => dayText(today - 13 * DAY + i * DAY));
const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Adelaide', 'Pacific/Chatham', 'America/St_Johns', 'Asia/Kathmandu'];

function shifted(events: unknown[]): unknown[] {
  return events.map((e) => {
    const event = e as { timestamp: string };
    return { ...event, timestamp: new Date(Date.parse(event.timestamp) + shiftMs).toISOString() };
  });
}

const generated = shifted(generatedEvents());
const generatedVisitors = [...new Set(generated.map((e) => (e as { visitor_id: string }).visitor_id))].sort();

interface Call {
  method: 'GET' | 'POST';
  path: string;
  domain: string;
  body?: Record<string, unknown>;
  query?: Record<string, string>;
}

const range = (days: readonly string[]) =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...presets) },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...days), fc.constantFrom(...days)).map(([a, b]) => (a <= b ? [a, b] : [b, a])) },
  );
const shopDays = ['2026-02-26', '2026-02-27', '2026-02-28', '2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04'];

/** Filters that match rows (from the pools) or any field and operator with values that may match nothing. */
function filters(fields: readonly string[]) {
  const pool = [...filterPool, ...pageFilterPool].filter((f) => fields.includes(f.field)).map((f) => [f.field, f.operator, f.value]);
  const anyField = fc
    .tuple(fc.constantFrom(...fields), fc.constantFrom(...filterOperators), fc.constantFrom('/', '/pricing', 'pro', 'US', 'o', "o'k", '(not set)', '(direct)', 'google.com', 'Chr'))
    .map(([field, operator, value]) => [field, operator, field === 'event_property' ? `plan:${value}` : value]);
  const filter = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...pool) }, { weight: 1, arbitrary: anyField });
  // Half without filters, so most answers have rows to compare.
  return fc.oneof(fc.constant([]), fc.array(filter, { minLength: 1, maxLength: 2 }));
}

function queryCall(domain: string, days: readonly string[]): fc.Arbitrary<Call> {
  return fc.boolean().chain((includeRevenue) =>
    fc
      .record({
        metrics: fc.uniqueArray(fc.constantFrom(...metrics.filter((m) => includeRevenue || !['revenue', 'conversions', 'conversion_rate'].includes(m))), { minLength: 1, maxLength: 7 }),
        dimensions: fc.oneof(
          { weight: 1, arbitrary: fc.constant(['event']) },
          { weight: 5, arbitrary: fc.uniqueArray(fc.constantFrom(...dimensions.filter((d) => d !== 'event')), { maxLength: 2 }) },
        ),
        date_range: range(days),
        filters: filters(queryFilterFields),
        timezone: fc.constantFrom(...ZONES),
        sort: fc.option(fc.record({ field: fc.constantFrom('visitors', 'pageviews', 'bounce_rate'), order: fc.constantFrom('asc', 'desc') }), { nil: undefined }),
        limit: fc.integer({ min: 1, max: 50 }),
        offset: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 20 })),
      })
      .map((b) => ({ method: 'POST' as const, path: '/v1/query', domain, body: { domain, include_revenue: includeRevenue, ...b, ...(b.sort ? {} : { sort: undefined }) } })),
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
    .record({ path: fc.constantFrom('/v1/journeys/stats', '/v1/journeys/activity'), visitor_id: visitor, is_dev: fc.option(fc.boolean(), { nil: undefined }) })
    .map(({ path, ...b }) => ({ method: 'POST' as const, path, domain, body: clean({ domain, ...b }) }));
  return fc.oneof(timeline, whole);
}

function eventsCall(domain: string, days: readonly string[]): fc.Arbitrary<Call> {
  const window = fc.oneof(
    fc.constantFrom(...presets).map((period) => ({ period })),
    fc.tuple(fc.constantFrom(...days), fc.constantFrom(...days)).map(([a, b]) => (a <= b ? { start: a, end: b } : { start: b, end: a })),
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
      query: clean({ domain, ...window, limit, ...(revenue && path.split('/').length === 6 ? { include_revenue: 'true' } : {}) }) as Record<string, string>,
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

const CALLS = 320;
const calls: Call[] = fc.sample(
  fc.oneof({ weight: 3, arbitrary: perDomain(generatedDomain, generatedVisitors, dataDays) }, { weight: 1, arbitrary: perDomain(SHOP, ['v1', 'v2', 'v3', 'v4'], shopDays) }),
  { seed: SEED, numRuns: CALLS },
);

/** A body without the figures that measure the engine rather than answer the question. */
function answer(body: unknown): unknown {
  if (body && typeof body === 'object' && 'meta' in body) {
    const { query_ms: _ms, bytes_scanned: _bytes, ...meta } = (body as { meta: Record<string, unknown> }).meta;
    return { ...body, meta };
  }
  return body;
}

describe.skipIf('missing' in java)('the Athena engine on Trino answers exactly as DuckDB does', () => {
  let api: TestApi;
  let tokens: Record<string, () => Promise<string>>;

  beforeAll(async () => {
    // The files are written as the S3 path writes them.
    process.env.ANALYTICS_PARQUET_COMPRESSION = 'zstd';
    api = await startTestApi({ engine: 'trino' });
    expect((await api.importEvents(generated)).rejected).toEqual([]);
    expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
    tokens = Object.fromEntries([generatedDomain, SHOP].map((d) => [d, rotatingToken(api, { owner: 'differential', domains: [d], scopes: ['analytics:read'] })]));
  }, 300_000);
  afterAll(async () => {
    delete process.env.ANALYTICS_PARQUET_COMPRESSION;
    await api?.close();
  });

  it(`${CALLS} seeded requests over every endpoint: identical status and body`, { timeout: 1_500_000 }, async () => {
    const statuses = new Map<string, number>();
    let rowsSeen = 0;
    let withRows = 0;
    let bytesReported = 0;
    for (const [i, call] of calls.entries()) {
      const send = async () => {
        const res = await api.request(call.method, call.path, { token: await tokens[call.domain]!(), ...(call.body ? { body: call.body } : {}), ...(call.query ? { query: call.query } : {}) });
        const bytes = Number((res.body as { meta?: { bytes_scanned?: number } }).meta?.bytes_scanned ?? 0);
        return { status: res.status, body: answer(res.body), bytes };
      };
      installEngine(api.engine);
      const { bytes: localBytes, ...local } = await send();
      installEngine(api.trino!.engine);
      const { bytes: cloudBytes, ...cloud } = await send();
      const context = `call ${i}: ${call.method} ${call.path} ${JSON.stringify(call.body ?? call.query)}`;
      expect(cloud, context).toEqual(local);
      // Only the Athena engine reports bytes scanned: answers with them came from Trino.
      expect(localBytes, context).toBe(0);
      bytesReported += cloudBytes;
      const key = `${call.path.replace(/\/(signup|download|exit_link|nothing)\/properties.*/, '/{name}/properties...')} ${local.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      const data = (local.body as { data?: unknown[] }).data;
      if (Array.isArray(data)) rowsSeen += data.length;
      if (Array.isArray(data) && data.length > 0) withRows += 1;
    }
    console.info(`trino differential: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${rowsSeen} rows compared, ${withRows} answers with rows, ${bytesReported} bytes scanned by Trino`);
    // The requests must reach the engines' answers, not mostly validation errors or empty results, and Trino must
    // have read files.
    const ok = [...statuses].filter(([key]) => key.endsWith(' 200')).reduce((sum, [, n]) => sum + n, 0);
    expect(ok).toBeGreaterThan(CALLS * 0.8);
    expect(withRows).toBeGreaterThan(CALLS / 3);
    expect(bytesReported).toBeGreaterThan(0);
  });
});
