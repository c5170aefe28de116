import { TrinoSQL } from 'dt-sql-parser';
import { describe, expect, it } from 'vitest';
import { athenaTarget, localTarget } from '../../shared/query/sql/target.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import fc from 'fast-check';
import { planAnalyticsQuery, planQuery } from '../../shared/query/analytics/plan.js';
import { localCatalog, withStoreLayout } from '../../shared/query/sql/catalog.js';
import { queryArbitrary } from '../support/generated-sessions.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import { join, print } from '../../shared/query/sql/sql.js';
import { rangeConditions } from '../../shared/query/scope/event-scope.js';
import { analyticsQuery, otherQueries, pagePathFilters, shapes } from '../support/sql-cases.js';

// One plan, two printers. The Athena text must pass Trino's grammar, and the exact text of representative plans is
// pinned per dialect; no server (test/query/query-sql-runs.test.ts runs the DuckDB twins on real Parquet).

const athena = athenaTarget('analytics', 'events');
const athenaBeforeUpgrade = { ...athena, catalog: withStoreLayout(athena.catalog, 0) };
const trino = new TrinoSQL();

describe.each(shapes)('%s', (_, query) => {
  it('prints Athena SQL that Trino grammar accepts, with one parameter per placeholder', () => {
    const { sql, params } = printAnalyticsQuery(planAnalyticsQuery(query, athena.catalog), athena);
    expect(trino.validate(sql)).toEqual([]);
    expect(sql.split('?').length - 1).toBe(params.length);
  });
});

describe('the other endpoints queries', () => {
  it.each(otherQueries(athena))('%s: Athena SQL passes Trino grammar', (_, { sql }) => {
    expect(trino.validate(sql)).toEqual([]);
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
    ['athena before the upgrade', athenaBeforeUpgrade],
  ] as const)('%s: session metrics with page filters, sessions picked by their path lists', (_, target) => {
    const plan = planAnalyticsQuery(
      analyticsQuery({ metrics: ['bounce_rate'], filters: pagePathFilters }),
      target.catalog,
    );
    // A domain not yet at the current layout may hold whole fragments without paths: picked by their rows, the
    // others by their marks. At the layout, Athena merges every fragment in one read (marks `ignored`).
    expect(plan.sources.sessions).toMatchObject({
      from: 'fragments',
      pick: { by: 'paths', unlistedByRows: target === athenaBeforeUpgrade },
      marks: { duckdb: 'exact', athena: 'ignored', 'athena before the upgrade': 'stale' }[_],
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

describe('planning once', () => {
  it("the store's shape, given as the answer to the plan's one question, makes the plan it makes given from the start", () => {
    const seen = { questions: 0, bitmaps: 0 };
    const shape = fc.record({
      maxKey: fc.integer({ min: 1, max: 20_000_000 }),
      rowsPerDay: fc.integer({ min: 1, max: 2_000_000 }),
      distinct: fc.record({
        url_path: fc.integer({ min: 1, max: 5_000 }),
        country: fc.integer({ min: 1, max: 250 }),
        browser: fc.integer({ min: 1, max: 40 }),
        referrer_domain: fc.integer({ min: 1, max: 3_000 }),
      }),
    });
    fc.assert(
      fc.property(queryArbitrary, shape, (query, storeShape) => {
        const planning = planQuery(query, localCatalog);
        if (planning.question) seen.questions += 1;
        const plan = planning.question ? planning.answered(storeShape) : planning.plan;
        expect(plan).toEqual(planAnalyticsQuery(query, localCatalog, { storeShape }));
        if (
          planning.question &&
          plan.sources.rows?.from === 'buckets' &&
          plan.sources.rows.visitors?.count === 'bitmaps'
        )
          seen.bitmaps += 1;
        // Unanswered (the shape could not be read), the question leaves the plan made without one.
        if (planning.question) expect(planning.answered(undefined)).toEqual(planAnalyticsQuery(query, localCatalog));
      }),
      { numRuns: 2_000, seed: 20261128 },
    );
    // Not vacuous: questions were asked, and some answers turned a count into bitmaps.
    expect(seen.questions).toBeGreaterThan(20);
    expect(seen.bitmaps).toBeGreaterThan(0);
  });
});
