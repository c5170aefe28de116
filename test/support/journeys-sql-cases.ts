import type { SqlQuery } from '../../shared/query/sql/sql.js';
import type { SqlTarget } from '../../shared/query/sql/target.js';
import { printVisitorCount, printVisitorList } from '../../shared/query/journeys/print-list.js';
import { planTimeline, planVisitorList, visitorScope } from '../../shared/query/journeys/plan.js';
import type { VisitorListQuery } from '../../shared/requests/journeys.js';
import {
  printTimeline,
  printVisitorActivity,
  printVisitorExists,
  printVisitorStats,
} from '../../shared/query/journeys/print-visitor.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import { everyFilter } from '../fixtures/every-filter.js';

// Every journeys statement the SQL tests print for both dialects, over the journeys fixture
// (test/fixtures/journeys-events.ts): test/query/journeys-sql.test.ts checks their text,
// test/query/journeys-sql-runs.test.ts runs the DuckDB twins on real Parquet.

export function listQuery(overrides: Partial<VisitorListQuery> = {}): VisitorListQuery {
  return {
    domain: 'journeys.test',
    isDev: false,
    range: rangeOfDates('2026-05-04', '2026-05-06', 'UTC'),
    filters: [],
    bounds: [],
    hasRevenue: false,
    firstPurchase: false,
    sort: { field: 'last_seen', order: 'desc' },
    limit: 50,
    offset: 0,
    ...overrides,
  };
}

export const everyOption = listQuery({
  filters: everyFilter,
  bounds: [
    { aggregate: 'pageview_count', operator: '>', value: 1 },
    { aggregate: 'session_count', operator: '<', value: 9 },
    { aggregate: 'total_revenue_cents', operator: '>', value: -100 },
  ],
  hasRevenue: true,
  firstPurchase: true,
  sort: { field: 'latest_revenue', order: 'asc' },
  range: rangeOfDates('2026-03-20', '2026-04-05', 'Europe/Berlin'),
});

// No filters and no session count: the first pass reads visitor days, with the rows of the partial days at the ends.
export const fromVisitorDays = listQuery({
  ...everyOption,
  filters: [],
  bounds: everyOption.bounds.filter((b) => b.aggregate !== 'session_count'),
  sort: { field: 'revenue', order: 'desc' },
  range: rangeOfDates('2026-05-04', '2026-05-06', 'Asia/Kolkata'),
  limit: 10,
  offset: 20,
});

export function everyQuery(target: SqlTarget): [string, SqlQuery][] {
  const range = rangeOfDates('2026-05-04', '2026-05-06', 'Asia/Kolkata');
  const timeline = { domain: 'journeys.test', isDev: false, visitorId: 'alice', range, limit: 100, offset: 0 };
  const scope = visitorScope('journeys.test', 'alice', false, { firstDay: '2026-05-01', lastDay: '2026-05-09' });
  return [
    ['list, defaults', printVisitorList(planVisitorList(listQuery(), target), target)],
    ['list, every option across a DST change', printVisitorList(planVisitorList(everyOption, target), target)],
    ['list total past the last page', printVisitorCount(planVisitorList(everyOption, target), target)],
    [
      'list from visitor days, partial days at the ends',
      printVisitorList(planVisitorList(fromVisitorDays, target), target),
    ],
    ['list total from visitor days', printVisitorCount(planVisitorList(fromVisitorDays, target), target)],
    ...(['first_seen', 'pageviews', 'sessions', 'revenue'] as const).map((field): [string, SqlQuery] => [
      `list by ${field}`,
      printVisitorList(planVisitorList(listQuery({ sort: { field, order: 'asc' } }), target), target),
    ]),
    ['timeline', printTimeline(planTimeline({ ...timeline, includeAutoEvents: false }), target)],
    ['timeline with auto events', printTimeline(planTimeline({ ...timeline, includeAutoEvents: true }), target)],
    ['visitor exists', printVisitorExists(planTimeline({ ...timeline, includeAutoEvents: false }).scope, target)],
    ['stats', printVisitorStats(scope, target)],
    ['activity', printVisitorActivity(scope, target)],
  ];
}
