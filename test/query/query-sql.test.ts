import { TrinoSQL } from 'dt-sql-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dimensions, metrics, type AnalyticsQuery } from '../../shared/requests/query.js';
import { printEventList, printEventPropertyKeys, printEventPropertyValues } from '../../shared/query/events/print.js';
import { athenaTarget, localTarget, type SqlTarget } from '../../shared/query/sql/target.js';
import { printFirstEvent } from '../../shared/query/scope/first-event.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import { planAnalyticsQuery } from '../../shared/query/analytics/plan.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import { join, print, type SqlQuery } from '../../shared/query/sql/sql.js';
import { rangeConditions } from '../../shared/query/scope/event-scope.js';
import { shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { everyQueryFilter } from '../fixtures/every-filter.js';

// One plan, two printers. The Athena text must pass Trino's grammar; its DuckDB twin must run on real Parquet;
// and the exact text of representative plans is pinned per dialect.

const athena = athenaTarget('analytics', 'events');
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
  ...dimensions.map((d): [string, AnalyticsQuery] => [
    `by ${d}, every metric`,
    analyticsQuery({ dimensions: [d], metrics: [...metrics], timeZone: 'America/New_York' }),
  ]),
  [
    'two dimensions, sorted',
    analyticsQuery({
      dimensions: ['date', 'page'],
      metrics: ['pageviews', 'bounce_rate'],
      sort: { field: 'revenue', order: 'asc' },
    }),
  ],
  ['every filter', analyticsQuery({ dimensions: ['country'], metrics: [...metrics], filters: everyQueryFilter })],
  [
    "a page filter on the whole fragments' path lists (membership)",
    analyticsQuery({
      dimensions: ['referrer'],
      metrics: ['visitors', 'bounce_rate'],
      filters: [{ field: 'page', operator: 'is', value: '/pricing' }],
    }),
  ],
  [
    "page filters on the whole fragments' path lists (any operator)",
    analyticsQuery({ metrics: ['bounce_rate'], filters: pagePathFilters, timeZone: 'Asia/Kolkata' }),
  ],
  [
    'hour in a half-hour zone with DST-free segments',
    analyticsQuery({ dimensions: ['hour'], timeZone: 'Asia/Kolkata' }),
  ],
  [
    'a range across a DST change',
    analyticsQuery({
      dimensions: ['date'],
      timeZone: 'Europe/Berlin',
      range: rangeOfDates('2026-03-20', '2026-04-05', 'Europe/Berlin'),
    }),
  ],
];

function otherQueries(target: SqlTarget): [string, SqlQuery][] {
  const scope = { domain: 'shop.test', isDev: false, range: rangeOfDates('2026-03-01', '2026-03-03', 'UTC') };
  return [
    ['first event', printFirstEvent('shop.test', false, { firstDay: '2026-02-27', lastDay: '2026-03-03' }, target)],
    ['event list', printEventList(scope, 100, target)],
    ['event property keys', printEventPropertyKeys(scope, 'signup', 100, target)],
    ['event property values with revenue', printEventPropertyValues(scope, 'signup', 'plan', 100, true, target)],
    ['event property values', printEventPropertyValues(scope, 'signup', 'plan', 100, false, target)],
  ];
}

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(shopEvents);
});
afterAll(() => api?.close());

describe.each(shapes)('%s', (_, query) => {
  it('prints Athena SQL that Trino grammar accepts, with one parameter per placeholder', () => {
    const { sql, params } = printAnalyticsQuery(planAnalyticsQuery(query, athena.catalog), athena);
    expect(trino.validate(sql)).toEqual([]);
    expect(sql.split('?').length - 1).toBe(params.length);
  });

  it('prints DuckDB SQL that runs on the Parquet files', async () => {
    const { rows } = await api.engine.run(
      printAnalyticsQuery(planAnalyticsQuery(query, localTarget.catalog), localTarget),
    );
    expect(Array.isArray(rows)).toBe(true);
  });
});

describe('the other endpoints queries', () => {
  it.each(otherQueries(athena))('%s: Athena SQL passes Trino grammar', (_, { sql }) => {
    expect(trino.validate(sql)).toEqual([]);
  });
  it.each(otherQueries(localTarget))('%s: DuckDB SQL runs', async (_, query) => {
    await expect(api.engine.run(query)).resolves.toBeDefined();
  });
});

describe('exact SQL per dialect', () => {
  const pinned = analyticsQuery({
    dimensions: ['page'],
    metrics: ['visitors', 'bounce_rate'],
    filters: [
      { field: 'country', operator: 'is', value: 'US,(not set)' },
      { field: 'event', operator: 'is', value: 'signup' },
    ],
  });
  const hourly = analyticsQuery({
    dimensions: ['hour'],
    metrics: ['pageviews'],
    timeZone: 'America/New_York',
    range: rangeOfDates('2026-03-07', '2026-03-08', 'America/New_York'),
  });

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s: page breakdown with a row and a visitor filter', (_, target) => {
    expect(printAnalyticsQuery(planAnalyticsQuery(pinned, target.catalog), target)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s: session metrics with page filters, whole fragments picked by their paths', (_, target) => {
    const plan = planAnalyticsQuery(
      analyticsQuery({ metrics: ['bounce_rate'], filters: pagePathFilters }),
      target.catalog,
    );
    expect(plan.sources.sessions).toMatchObject({
      from: 'fragments',
      pick: { by: 'paths', unlistedByRows: target === athena },
    });
    expect(printAnalyticsQuery(plan, target)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s: hourly across a DST change', (_, target) => {
    expect(printAnalyticsQuery(planAnalyticsQuery(hourly, target.catalog), target)).toMatchSnapshot();
  });

  it('count bucket visitors by the integer key locally and by id on Athena, where `import --s3` assigns no keys', () => {
    const byCountry = analyticsQuery({ metrics: ['visitors'], dimensions: ['country'] });
    const local = planAnalyticsQuery(byCountry, localTarget.catalog);
    const onAthena = planAnalyticsQuery(byCountry, athena.catalog);
    expect(local.sources.rows).toEqual({
      from: 'buckets',
      relation: 'pageviews',
      visitors: { count: 'distinct', column: 'visitor_key' },
    });
    expect(onAthena.sources.rows).toEqual({
      from: 'buckets',
      relation: 'pageviews',
      visitors: { count: 'distinct', column: 'visitor_id' },
    });
    expect(printAnalyticsQuery(local, localTarget).sql).toContain('count(DISTINCT visitor_key) AS visitors');
    expect(printAnalyticsQuery(onAthena, athena).sql).toContain('count(DISTINCT visitor_id) AS visitors');
    expect(printAnalyticsQuery(onAthena, athena).sql).not.toContain('visitor_key');
  });

  it('bound instants only inside a partition: a partition is one UTC day, so bounds on its edges add nothing', () => {
    const conditions = (range: Parameters<typeof rangeConditions>[0], column: 'ts' | 'bucket') =>
      print(join(rangeConditions(range, column), ' AND ')).sql;
    expect(conditions(rangeOfDates('2026-03-01', '2026-03-03', 'UTC'), 'ts')).toBe('dt BETWEEN ? AND ?');
    expect(conditions(rangeOfDates('2026-03-01', '2026-03-03', 'Asia/Kolkata'), 'bucket')).toBe(
      'dt BETWEEN ? AND ? AND bucket >= ? AND bucket < ?',
    );
    // A range that starts on a partition's edge and ends inside one, and the reverse.
    const day = (iso: string) => new Date(iso);
    expect(
      conditions(
        {
          from: day('2026-03-01T00:00:00Z'),
          to: day('2026-03-03T12:00:00Z'),
          dtFrom: '2026-03-01',
          dtTo: '2026-03-03',
        },
        'ts',
      ),
    ).toBe('dt BETWEEN ? AND ? AND ts < ?');
    expect(
      conditions(
        {
          from: day('2026-03-01T06:15:00Z'),
          to: day('2026-03-04T00:00:00Z'),
          dtFrom: '2026-03-01',
          dtTo: '2026-03-03',
        },
        'ts',
      ),
    ).toBe('dt BETWEEN ? AND ? AND ts >= ?');
  });

  it('values never enter the SQL text', () => {
    const hostile = analyticsQuery({
      filters: [{ field: 'page', operator: 'is', value: "x'; DROP TABLE events; --" }],
    });
    const { sql, params } = printAnalyticsQuery(planAnalyticsQuery(hostile, athena.catalog), athena);
    expect(sql).not.toContain('DROP');
    expect(params).toContainEqual({ type: 'string', value: "x'; DROP TABLE events; --" });
  });
});
