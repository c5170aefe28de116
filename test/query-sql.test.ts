import { TrinoSQL } from 'dt-sql-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dimensions, metrics, type AnalyticsQuery } from '../shared/query/analytics/request.js';
import { printEventList, printEventPropertyKeys, printEventPropertyValues } from '../shared/query/events/print.js';
import { athenaDialect, duckdbDialect } from '../shared/query/sql/dialects.js';
import { printFirstEvent } from '../shared/query/scope/first-event.js';
import { printAnalyticsQuery } from '../shared/query/analytics/print.js';
import { planAnalyticsQuery } from '../shared/query/analytics/plan.js';
import { rangeOfDates } from '../shared/time/date-range.js';
import type { SqlQuery } from '../shared/engines/engine.js';
import { shopEvents } from './fixtures/shop-events.js';
import { startTestApi, type TestApi } from './support/test-api.js';
import { everyQueryFilter } from './fixtures/every-filter.js';

// One plan, two printers. The Athena text must pass Trino's grammar; its DuckDB twin must run on real Parquet;
// and the exact text of representative plans is pinned per dialect.

const athena = athenaDialect('analytics', 'events');
const trino = new TrinoSQL();

function analyticsQuery(overrides: Partial<AnalyticsQuery>): AnalyticsQuery {
  const timeZone = overrides.timeZone ?? 'UTC';
  return {
    domain: 'shop.test',
    metrics: ['visitors', 'pageviews'],
    dimensions: [],
    filters: [],
    range: rangeOfDates('2026-03-01', '2026-03-03', timeZone),
    timeZone,
    sort: null,
    limit: 100,
    offset: 0,
    ...overrides,
  };
}


const pagePathFilters: AnalyticsQuery['filters'] = [
  { field: 'page', operator: 'contains', value: 'pric' },
  { field: 'page', operator: 'is_not', value: '/pricing/old,(not set)' },
];

const shapes: [string, AnalyticsQuery][] = [
  ['totals, every metric', analyticsQuery({ metrics: [...metrics] })],
  ...dimensions.map((d): [string, AnalyticsQuery] => [`by ${d}, every metric`, analyticsQuery({ dimensions: [d], metrics: [...metrics], timeZone: 'America/New_York' })]),
  ['two dimensions, sorted', analyticsQuery({ dimensions: ['date', 'page'], metrics: ['pageviews', 'bounce_rate'], sort: { field: 'revenue', order: 'asc' } })],
  ['every filter', analyticsQuery({ dimensions: ['country'], metrics: [...metrics], filters: everyQueryFilter })],
  ['a page filter on the whole fragments\' path lists (membership)', analyticsQuery({ dimensions: ['referrer'], metrics: ['visitors', 'bounce_rate'], filters: [{ field: 'page', operator: 'is', value: '/pricing' }] })],
  ['page filters on the whole fragments\' path lists (any operator)', analyticsQuery({ metrics: ['bounce_rate'], filters: pagePathFilters, timeZone: 'Asia/Kolkata' })],
  ['hour in a half-hour zone with DST-free segments', analyticsQuery({ dimensions: ['hour'], timeZone: 'Asia/Kolkata' })],
  ['a range across a DST change', analyticsQuery({ dimensions: ['date'], timeZone: 'Europe/Berlin', range: rangeOfDates('2026-03-20', '2026-04-05', 'Europe/Berlin') })],
];

function otherQueries(dialect: typeof athena): [string, SqlQuery][] {
  const scope = { domain: 'shop.test', isDev: false, range: rangeOfDates('2026-03-01', '2026-03-03', 'UTC') };
  return [
    ['first event', printFirstEvent(dialect, 'shop.test', false)],
    ['event list', printEventList(dialect, scope, 100)],
    ['event property keys', printEventPropertyKeys(dialect, scope, 'signup', 100)],
    ['event property values with revenue', printEventPropertyValues(dialect, scope, 'signup', 'plan', 100, true)],
    ['event property values', printEventPropertyValues(dialect, scope, 'signup', 'plan', 100, false)],
  ];
}

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(shopEvents);
});
afterAll(() => api?.close());

describe.each(shapes)('%s', (_, query) => {
  const plan = planAnalyticsQuery(query);

  it('prints Athena SQL that Trino grammar accepts, with one parameter per placeholder', () => {
    const { sql, params } = printAnalyticsQuery(plan, athena);
    expect(trino.validate(sql)).toEqual([]);
    expect(sql.split('?').length - 1).toBe(params.length);
  });

  it('prints DuckDB SQL that runs on the Parquet files', async () => {
    const { rows } = await api.engine.run(printAnalyticsQuery(plan, duckdbDialect));
    expect(Array.isArray(rows)).toBe(true);
  });
});

describe('the other endpoints queries', () => {
  it.each(otherQueries(athena))('%s: Athena SQL passes Trino grammar', (_, { sql }) => {
    expect(trino.validate(sql)).toEqual([]);
  });
  it.each(otherQueries(duckdbDialect))('%s: DuckDB SQL runs', async (_, query) => {
    await expect(api.engine.run(query)).resolves.toBeDefined();
  });
});

describe('exact SQL per dialect', () => {
  const pinned = analyticsQuery({
    dimensions: ['page'],
    metrics: ['visitors', 'bounce_rate'],
    filters: [{ field: 'country', operator: 'is', value: 'US,(not set)' }, { field: 'event', operator: 'is', value: 'signup' }],
  });
  const hourly = analyticsQuery({ dimensions: ['hour'], metrics: ['pageviews'], timeZone: 'America/New_York', range: rangeOfDates('2026-03-07', '2026-03-08', 'America/New_York') });

  it.each([
    ['duckdb', duckdbDialect],
    ['athena', athena],
  ] as const)('%s: page breakdown with a row and a visitor filter', (_, dialect) => {
    expect(printAnalyticsQuery(planAnalyticsQuery(pinned), dialect)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', duckdbDialect],
    ['athena', athena],
  ] as const)('%s: session metrics with page filters, whole fragments picked by their paths', (_, dialect) => {
    const plan = planAnalyticsQuery(analyticsQuery({ metrics: ['bounce_rate'], filters: pagePathFilters }));
    expect(plan.pathLists).toBe(true);
    expect(printAnalyticsQuery(plan, dialect)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', duckdbDialect],
    ['athena', athena],
  ] as const)('%s: hourly across a DST change', (_, dialect) => {
    expect(printAnalyticsQuery(planAnalyticsQuery(hourly), dialect)).toMatchSnapshot();
  });

  it('count bucket visitors by the integer key locally and by id on Athena, where `import --s3` assigns no keys', () => {
    const byCountry = planAnalyticsQuery(analyticsQuery({ metrics: ['visitors'], dimensions: ['country'] }));
    expect(byCountry.buckets).toBe('pageviews');
    expect(printAnalyticsQuery(byCountry, duckdbDialect).sql).toContain('count(DISTINCT visitor_key) AS visitors');
    expect(printAnalyticsQuery(byCountry, athena).sql).toContain('count(DISTINCT visitor_id) AS visitors');
    expect(printAnalyticsQuery(byCountry, athena).sql).not.toContain('visitor_key');
  });

  it('values never enter the SQL text', () => {
    const hostile = analyticsQuery({ filters: [{ field: 'page', operator: 'is', value: "x'; DROP TABLE events; --" }] });
    const { sql, params } = printAnalyticsQuery(planAnalyticsQuery(hostile), athena);
    expect(sql).not.toContain('DROP');
    expect(params).toContainEqual({ type: 'string', value: "x'; DROP TABLE events; --" });
  });
});
