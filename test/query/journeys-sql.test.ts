import { TrinoSQL } from 'dt-sql-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlQuery } from '../../shared/query/sql/sql.js';
import { athenaTarget, localTarget, type SqlTarget } from '../../shared/query/sql/target.js';
import { printListedDetails, printVisitorCount, printVisitorList } from '../../shared/query/journeys/print-list.js';
import { planTimeline, planVisitorList, visitorScope } from '../../shared/query/journeys/plan.js';
import type { VisitorListQuery } from '../../shared/requests/journeys.js';
import {
  printTimeline,
  printVisitorActivity,
  printVisitorExists,
  printVisitorStats,
} from '../../shared/query/journeys/print-visitor.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import { journeyEvents } from '../fixtures/journeys-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { everyFilter } from '../fixtures/every-filter.js';

// One plan, two printers, for every journeys query: the Athena text must pass Trino's grammar, its DuckDB twin
// must run on real Parquet, and the exact text of one list plan is pinned per dialect.

const athena = athenaTarget('analytics', 'events');
const trino = new TrinoSQL();

function listQuery(overrides: Partial<VisitorListQuery> = {}): VisitorListQuery {
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

const everyOption = listQuery({
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
const fromVisitorDays = listQuery({
  ...everyOption,
  filters: [],
  bounds: everyOption.bounds.filter((b) => b.aggregate !== 'session_count'),
  sort: { field: 'revenue', order: 'desc' },
  range: rangeOfDates('2026-05-04', '2026-05-06', 'Asia/Kolkata'),
  limit: 10,
  offset: 20,
});

function everyQuery(target: SqlTarget): [string, SqlQuery][] {
  const range = rangeOfDates('2026-05-04', '2026-05-06', 'Asia/Kolkata');
  const timeline = { domain: 'journeys.test', isDev: false, visitorId: 'alice', range, limit: 100, offset: 0 };
  const scope = visitorScope('journeys.test', 'alice', false, { firstDay: '2026-05-01', lastDay: '2026-05-09' });
  return [
    ['list, defaults', printVisitorList(planVisitorList(listQuery()), target)],
    ['list, every option across a DST change', printVisitorList(planVisitorList(everyOption), target)],
    ['list total past the last page', printVisitorCount(planVisitorList(everyOption), target)],
    ['list from visitor days, partial days at the ends', printVisitorList(planVisitorList(fromVisitorDays), target)],
    ['list total from visitor days', printVisitorCount(planVisitorList(fromVisitorDays), target)],
    ...(['first_seen', 'pageviews', 'sessions', 'revenue'] as const).map((field): [string, SqlQuery] => [
      `list by ${field}`,
      printVisitorList(planVisitorList(listQuery({ sort: { field, order: 'asc' } })), target),
    ]),
    ['timeline', printTimeline(planTimeline({ ...timeline, includeAutoEvents: false }), target)],
    ['timeline with auto events', printTimeline(planTimeline({ ...timeline, includeAutoEvents: true }), target)],
    ['visitor exists', printVisitorExists(planTimeline({ ...timeline, includeAutoEvents: false }).scope, target)],
    ['stats', printVisitorStats(scope, target)],
    ['activity', printVisitorActivity(scope, target)],
  ];
}

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(journeyEvents);
});
afterAll(() => api?.close());

describe('every journeys query', () => {
  it.each(everyQuery(athena))(
    '%s: Athena SQL passes Trino grammar, one parameter per placeholder',
    (_, { sql, params }) => {
      expect(trino.validate(sql)).toEqual([]);
      expect(sql.split('?').length - 1).toBe(params.length);
    },
  );

  it.each(everyQuery(localTarget))('%s: DuckDB SQL runs', async (_, query) => {
    await expect(api.engine.run(query)).resolves.toBeDefined();
  });

  it('names the domain, the visitor and is_dev, and its partitions (the range, or all-time: the domain`s days), in every one-visitor query', () => {
    for (const [name, query] of everyQuery(athena).filter(([n]) => !n.startsWith('list'))) {
      expect(query.sql, name).toMatch(
        /WHERE domain = \? AND dt BETWEEN \? AND \? AND (ts >= \? AND ts < \? AND )?visitor_id = \? AND is_dev = \?/,
      );
      expect(query.params.slice(0, 1), name).toEqual([{ type: 'string', value: 'journeys.test' }]);
    }
  });
});

describe('exact SQL of a list plan per dialect', () => {
  const pinned = planVisitorList(
    listQuery({
      filters: [
        { field: 'country', operator: 'is', value: 'US' },
        { field: 'event', operator: 'is', value: 'signup' },
      ],
      bounds: [{ aggregate: 'pageview_count', operator: '>', value: 1 }],
      firstPurchase: true,
      sort: { field: 'latest_revenue', order: 'desc' },
      range: rangeOfDates('2026-05-04', '2026-05-06', 'Asia/Kolkata'),
      limit: 10,
      offset: 20,
    }),
  );

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s', (_, target) => {
    expect(printVisitorList(pinned, target)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s, first pass over visitor days', (_, target) => {
    const plan = planVisitorList(fromVisitorDays);
    expect(plan.ranking).toMatchObject({
      from: 'visitor-days',
      partitions: { dtFrom: '2026-05-04', dtTo: '2026-05-05' },
    });
    expect(printVisitorList(plan, target)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)(
    '%s, newest visitors first over visitor days: DuckDB groups only the visitors ahead of a cut',
    (name, target) => {
      const plan = planVisitorList(listQuery({ range: fromVisitorDays.range, limit: 10, offset: 20 }));
      expect(plan.ranking.from).toBe('visitor-days');
      const query = printVisitorList(plan, target);
      expect(query.sql.includes('cut_edge')).toBe(name === 'duckdb');
      expect(query).toMatchSnapshot();
    },
  );

  it("duckdb: the page's details, a statement of their own, read the listed visitors in the partitions the page names", () => {
    const plan = planVisitorList(fromVisitorDays);
    expect(printVisitorList(plan, localTarget).sql).toContain('AS listed_days');
    expect(printVisitorList(plan, athena).sql).not.toContain('listed_days');
    const details = printListedDetails(plan, ["v'1", 'v2'], ['2026-05-04', '2026-05-05'], localTarget);
    expect(details.params).toEqual(
      expect.arrayContaining([
        { type: 'string', value: "v'1" },
        { type: 'date', value: '2026-05-05' },
      ]),
    );
    expect(details).toMatchSnapshot();
  });

  it('values never enter the SQL text', () => {
    const hostile = planVisitorList(
      listQuery({ filters: [{ field: 'page', operator: 'is', value: "x'; DROP TABLE events; --" }] }),
    );
    const { sql, params } = printVisitorList(hostile, athena);
    expect(sql).not.toContain('DROP');
    expect(params).toContainEqual({ type: 'string', value: "x'; DROP TABLE events; --" });
  });
});
