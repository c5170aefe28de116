import type { AnalyticsQuery } from '../../shared/requests/query.js';
import { dimensions, metrics } from '../../shared/requests/query.js';
import { printEventList, printEventPropertyKeys, printEventPropertyValues } from '../../shared/query/events/print.js';
import type { SqlTarget } from '../../shared/query/sql/target.js';
import { printFirstEvent } from '../../shared/query/scope/first-event.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import type { SqlQuery } from '../../shared/query/sql/sql.js';
import { everyQueryFilter } from '../fixtures/every-filter.js';

// The statements the SQL tests print for both dialects: representative /v1/query shapes over the shop fixture
// (test/fixtures/shop-events.ts), and each other endpoint's statement. test/query/query-sql.test.ts checks their
// text; test/query/query-sql-runs.test.ts runs the DuckDB twins on real Parquet.

export function analyticsQuery(overrides: Partial<AnalyticsQuery>): AnalyticsQuery {
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

export const pagePathFilters: AnalyticsQuery['filters'] = [
  { field: 'page', operator: 'contains', value: 'pric' },
  { field: 'page', operator: 'is_not', value: '/pricing/old,(not set)' },
];

export const shapes: [string, AnalyticsQuery][] = [
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

export function otherQueries(target: SqlTarget): [string, SqlQuery][] {
  const scope = { domain: 'shop.test', isDev: false, range: rangeOfDates('2026-03-01', '2026-03-03', 'UTC') };
  return [
    ['first event', printFirstEvent('shop.test', false, { firstDay: '2026-02-27', lastDay: '2026-03-03' }, target)],
    ['event list', printEventList(scope, 100, target)],
    ['event property keys', printEventPropertyKeys(scope, 'signup', 100, target)],
    ['event property values with revenue', printEventPropertyValues(scope, 'signup', 'plan', 100, true, target)],
    ['event property values', printEventPropertyValues(scope, 'signup', 'plan', 100, false, target)],
  ];
}
