import { TrinoSQL } from 'dt-sql-parser';
import { describe, expect, it } from 'vitest';
import type { SqlTarget } from '../../shared/query/sql/target.js';
import { athenaTarget, localTarget } from '../../shared/query/sql/target.js';
import { printListedDetails, printVisitorList } from '../../shared/query/journeys/print-list.js';
import { planVisitorList } from '../../shared/query/journeys/plan.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import { everyQuery, fromVisitorDays, listQuery } from '../support/journeys-sql-cases.js';

// One plan, two printers, for every journeys query: the Athena text must pass Trino's grammar, and the exact text of
// one list plan is pinned per dialect; no server (test/query/journeys-sql-runs.test.ts runs the DuckDB twins).

const athena = athenaTarget('analytics', 'events');
const trino = new TrinoSQL();

describe('every journeys query', () => {
  it.each(everyQuery(athena))(
    '%s: Athena SQL passes Trino grammar, one parameter per placeholder',
    (_, { sql, params }) => {
      expect(trino.validate(sql)).toEqual([]);
      expect(sql.split('?').length - 1).toBe(params.length);
    },
  );

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
  const pinned = (target: SqlTarget) =>
    planVisitorList(
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
      target,
    );

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s', (_, target) => {
    expect(printVisitorList(pinned(target), target)).toMatchSnapshot();
  });

  it.each([
    ['duckdb', localTarget],
    ['athena', athena],
  ] as const)('%s, first pass over visitor days', (_, target) => {
    const plan = planVisitorList(fromVisitorDays, target);
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
      const plan = planVisitorList(listQuery({ range: fromVisitorDays.range, limit: 10, offset: 20 }), target);
      expect(plan.ranking.from).toBe('visitor-days');
      const query = printVisitorList(plan, target);
      expect(query.sql.includes('cut_edge')).toBe(name === 'duckdb');
      expect(query).toMatchSnapshot();
    },
  );

  it("duckdb: the page's details, a statement of their own, read the listed visitors in the partitions the page names", () => {
    const plan = planVisitorList(fromVisitorDays, localTarget);
    expect(printVisitorList(plan, localTarget).sql).toContain('AS listed_days');
    expect(printVisitorList(planVisitorList(fromVisitorDays, athena), athena).sql).not.toContain('listed_days');
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
      athena,
    );
    const { sql, params } = printVisitorList(hostile, athena);
    expect(sql).not.toContain('DROP');
    expect(params).toContainEqual({ type: 'string', value: "x'; DROP TABLE events; --" });
  });
});
