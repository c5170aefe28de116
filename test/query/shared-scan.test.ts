import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importEvents } from '../../local/store/local-destination.js';
import { localCatalog, type StoreCatalog } from '../../shared/query/sql/catalog.js';
import type { SqlTarget } from '../../shared/query/sql/target.js';
import { duckdbDialect } from '../../shared/query/sql/dialects.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import { planAnalyticsQuery, type QueryPlan } from '../../shared/query/analytics/plan.js';
import { groupingSetOf, sharedScanGroups, sharedScanKey } from '../../shared/query/analytics/shared-scan.js';
import { printSharedScan } from '../../shared/query/analytics/print-shared-scan.js';
import { isRowFilter, rowFilterFields, type Filter } from '../../shared/requests/filters.js';
import {
  isSortMetric,
  isTimeDimension,
  type AnalyticsQuery,
  type Dimension,
  type Metric,
  type SortField,
} from '../../shared/requests/query.js';
import { rangeOfDates } from '../../shared/time/date-range.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { days, domain, filterPool, generatedEvents, pageFilterPool, zones } from '../support/generated-sessions.js';

// A batch's queries over one scope, answered by one statement that reads each relation once
// (shared/query/analytics/print-shared-scan.ts), must give each query the rows its own statement gives: on generated
// data (sessions across midnight UTC, attribution changing inside a session, sessions without pageviews), random
// batches of queries by attributes under the same filters, sorted and paged at random, over the store's relations read as on S3
// (every fragment merged per session, visitors counted by id) and as the local store marks them, in both forms of
// the visitor counts. The Trino differential suite sends batches the same way (test/engines/trino-differential.test.ts).

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
  const events = generatedEvents();
  const half = Math.ceil(events.length / 2);
  await importEvents(events.slice(0, half), api.paths);
  await importEvents(events.slice(half), api.paths, { batchRows: 50 });
}, 120_000);
afterAll(() => api?.close());

/** The local relations read as the S3 store's: marks inexact, no session counts, visitors by id. */
const asOnS3: StoreCatalog = {
  ...localCatalog,
  profile: 'bucket',
  bucketVisitor: 'visitor_id',
  visitorDayKeys: false,
  wholeMarksExact: false,
  sessionCounts: null,
  unmarkedFragments: null,
};
/** The local store's exact marks (whole fragments as sessions by themselves), without the session counts. */
const exactMarks: StoreCatalog = { ...localCatalog, bucketVisitor: 'visitor_id', sessionCounts: null };
const preGrouped = { ...duckdbDialect, distinctBesideSum: 'pre-grouped' as const };

/** An unfiltered query of the generated domain over `range`, in UTC, with `q`'s fields. */
const queryOver = (range: AnalyticsQuery['range'], q: Partial<AnalyticsQuery> = {}): AnalyticsQuery => ({
  domain,
  metrics: ['visitors'],
  dimensions: [],
  filters: [],
  range,
  timeZone: 'UTC',
  sort: null,
  limit: 10,
  offset: 0,
  ...q,
});

const sharedMetrics: Metric[] = [
  'pageviews',
  'visitors',
  'bounce_rate',
  'avg_session_duration',
  'visits',
  'revenue',
  'conversions',
  'conversion_rate',
];
const attributes = rowFilterFields.filter((f) => f !== 'page') as Dimension[];

const queryShape = fc
  .record({
    metrics: fc.subarray(sharedMetrics, { minLength: 1 }),
    dimensions: fc.oneof(
      fc.constant<Dimension[]>([]),
      fc.subarray(attributes, { minLength: 1, maxLength: 2 }),
      fc.constant<Dimension[]>(['page']),
      fc.constant<Dimension[]>(['page', 'referrer']),
      fc.constantFrom<Dimension[]>(['date'], ['hour'], ['week'], ['month'], ['date', 'country'], ['page', 'hour']),
      // Dimensions in another order than the subarrays': one grouping set for both orders.
      fc.constantFrom<Dimension[]>(['device', 'country'], ['os', 'browser'], ['country', 'date']),
    ),
    sortBy: fc.nat(6),
    order: fc.constantFrom<'asc' | 'desc'>('asc', 'desc'),
    limit: fc.integer({ min: 1, max: 6 }),
    offset: fc.integer({ min: 0, max: 3 }),
  })
  .map((q): Omit<AnalyticsQuery, 'range' | 'timeZone'> => {
    const fields = [...q.metrics.filter((m) => isSortMetric(m as SortField)), ...q.dimensions];
    const field = fields[q.sortBy % (fields.length + 1)];
    return {
      domain,
      metrics: q.metrics,
      dimensions: q.dimensions,
      filters: [],
      sort: field === undefined ? null : { field: field as SortField, order: q.order },
      limit: q.limit,
      offset: q.offset,
    };
  });

const batchArbitrary = fc.record({
  queries: fc.array(queryShape, { minLength: 2, maxLength: 8 }),
  // A dashboard's view filters every card alike: row filters, page filters picking sessions by their path lists.
  filters: fc.oneof(
    fc.constant<Filter[]>([]),
    fc.subarray(filterPool.filter(isRowFilter), { minLength: 1, maxLength: 2 }),
    fc.subarray(pageFilterPool, { minLength: 1, maxLength: 1 }),
  ),
  timeZone: fc.constantFrom(...zones),
  range: fc.tuple(fc.constantFrom(...days), fc.constantFrom(...days)).map(([a, b]) => (a <= b ? [a, b] : [b, a])),
  catalog: fc.constantFrom(asOnS3, exactMarks),
  dialect: fc.constantFrom(duckdbDialect, preGrouped),
});

/** Each plan of `plans` answered alone and by the shared statements of sharedScanGroups. */
async function answeredBoth(plans: QueryPlan[], target: SqlTarget) {
  const alone = await Promise.all(plans.map((p) => api.engine.run(printAnalyticsQuery(p, target))));
  const together: unknown[][] = [];
  let shared = 0;
  let sharedRevenue = 0;
  let sharedTimes = 0;
  let sharedSets = 0;
  for (const group of sharedScanGroups(plans)) {
    if (group.length === 1) {
      together[group[0]!] = alone[group[0]!]!.rows;
      continue;
    }
    shared += group.length;
    sharedRevenue += group.filter((i) => plans[i]!.metrics.some((m) => m === 'revenue' || m === 'conversions')).length;
    sharedTimes += group.filter((i) => plans[i]!.dimensions.some(isTimeDimension)).length;
    const shapes = group.map((i) => groupingSetOf(plans[i]!).key);
    sharedSets += shapes.filter((shape, n) => shapes.indexOf(shape) !== n).length;
    const scan = printSharedScan(
      group.map((i) => plans[i]!),
      target,
    );
    const rows = scan.split((await api.engine.run(scan.statement.query)).rows);
    group.forEach((i, n) => (together[i] = rows[n]!));
  }
  return { alone: alone.map((a) => a.rows), together, shared, sharedRevenue, sharedTimes, sharedSets };
}

describe('a shared scan', () => {
  it('gives every query of a random batch the rows its own statement gives', async () => {
    let shared = 0;
    let filtered = 0;
    let withRevenue = 0;
    let withTimes = 0;
    let setsShared = 0;
    await fc.assert(
      fc.asyncProperty(batchArbitrary, async (batch) => {
        const range = rangeOfDates(batch.range[0]!, batch.range[1]!, batch.timeZone);
        const target = { dialect: batch.dialect, catalog: batch.catalog };
        const plans = batch.queries.map((q) =>
          planAnalyticsQuery({ ...q, range, timeZone: batch.timeZone, filters: batch.filters }, batch.catalog),
        );
        const answers = await answeredBoth(plans, target);
        shared += answers.shared;
        if (batch.filters.length) filtered += answers.shared;
        withRevenue += answers.sharedRevenue;
        withTimes += answers.sharedTimes;
        setsShared += answers.sharedSets;
        expect(answers.together).toEqual(answers.alone);
      }),
      { numRuns: 100, seed: 42 },
    );
    // Most random batches hold queries of one key: the property was tested on shared statements, not only alone.
    expect(shared).toBeGreaterThan(100);
    expect(filtered).toBeGreaterThan(30);
    expect(withRevenue).toBeGreaterThan(20);
    expect(withTimes).toBeGreaterThan(20);
    // Queries grouped alike in one grouping set, each in its own order and page.
    expect(setsShared).toBeGreaterThan(20);
  }, 240_000);

  it('reads each relation once, and answers a range without events as each query alone', async () => {
    const range = rangeOfDates('2026-01-01', '2026-01-31', 'UTC');
    const query = (metrics: Metric[], dimensions: Dimension[]) => queryOver(range, { metrics, dimensions });
    const queries = [
      query(['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'], []),
      query(['visitors', 'bounce_rate'], ['referrer']),
      query(['visitors'], ['country']),
      query(['visitors', 'bounce_rate', 'avg_session_duration'], ['device']),
      query(['visitors'], ['country', 'device']),
      query(['visitors', 'pageviews', 'bounce_rate'], ['page']),
    ];
    for (const dialect of [duckdbDialect, preGrouped]) {
      const target = { dialect, catalog: asOnS3 };
      const plans = queries.map((q) => planAnalyticsQuery(q, asOnS3));
      expect(sharedScanGroups(plans)).toEqual([[0, 1, 2, 3, 4, 5]]);
      const { sql } = printSharedScan(plans, target).statement.query;
      expect(sql.match(/pageview_buckets/g)).toHaveLength(1);
      expect(sql.match(/page_buckets/g)).toHaveLength(1);
      expect(sql.match(/session_fragments/g)).toHaveLength(1);
      const answers = await answeredBoth(plans, target);
      expect(answers.together).toEqual(answers.alone);
      expect(answers.alone[0]).toEqual([{ visitors: 0, pageviews: 0, bounce_rate: 0, avg_session_duration: 0 }]);
      // Without session metrics, the counts of visitors alone give the undimensioned query its row.
      // Two of them without dimensions share the anchored set; a day groups nothing either.
      const rowsOnly = [
        query(['visitors', 'pageviews'], []),
        query(['visitors', 'pageviews'], ['country']),
        query(['visitors'], []),
        query(['visitors', 'pageviews'], ['date']),
      ];
      const counted = await answeredBoth(
        rowsOnly.map((q) => planAnalyticsQuery(q, asOnS3)),
        target,
      );
      expect(counted.shared).toBe(4);
      expect(counted.together).toEqual(counted.alone);
      expect(counted.alone[0]).toEqual([{ visitors: 0, pageviews: 0 }]);
    }
  });

  it('takes only queries its statement answers as they are', () => {
    const range = rangeOfDates(days[2]!, days[5]!, 'UTC');
    const keyOf = (q: Partial<AnalyticsQuery>) => sharedScanKey(planAnalyticsQuery(queryOver(range, q), asOnS3));
    expect(keyOf({})).not.toBeNull();
    expect(keyOf({ dimensions: ['country'] })).toBe(keyOf({}));
    expect(keyOf({ dimensions: ['page'] })).toBe(keyOf({}));
    expect(keyOf({ dimensions: ['date'] })).toBe(keyOf({}));
    expect(keyOf({ dimensions: ['minute'] })).toBeNull();
    expect(keyOf({ dimensions: ['entry_page'] })).toBeNull();
    expect(keyOf({ dimensions: ['event'] })).toBeNull();
    expect(keyOf({ filters: [filterPool[3]!] })).not.toBe(keyOf({}));
    expect(keyOf({ filters: [filterPool[3]!], dimensions: ['country'] })).toBe(keyOf({ filters: [filterPool[3]!] }));
    // A page filter and a country: no bucket relation holds both, so the rows answer alone.
    expect(keyOf({ filters: [filterPool[0]!], dimensions: ['country'] })).toBeNull();
    expect(keyOf({ filters: [filterPool[5]!] })).toBeNull();
    expect(keyOf({ filters: [{ field: 'entry_page', operator: 'is', value: '/' }] })).toBeNull();
    // Revenue alone is counted from the event rows; beside visitors, from the buckets and the revenue rows.
    expect(keyOf({ metrics: ['revenue'] })).toBeNull();
    expect(keyOf({ metrics: ['visitors', 'revenue'], dimensions: ['country'] })).toBe(keyOf({}));
    expect(keyOf({ range: rangeOfDates(days[2]!, days[6]!, 'UTC') })).not.toBe(keyOf({}));
    // Queries grouped alike share their grouping set where they read the same sides: with session metrics beside
    // visitors alone, a set would give the latter the groups of sessions without pageviews.
    const plan = (dimensions: Dimension[], metrics: Metric[] = ['visitors']) =>
      planAnalyticsQuery(queryOver(range, { dimensions, metrics }), asOnS3);
    expect(
      sharedScanGroups([
        plan(['country']),
        plan(['device']),
        plan(['device', 'country']),
        plan(['country', 'device']),
        plan(['country'], ['visitors', 'bounce_rate']),
        plan(['country'], ['pageviews']),
      ]),
    ).toEqual([[0, 1, 2, 3, 5], [4]]);
    // London's offsets agree with UTC's at both ends of March to November, so the two zones' ranges are the same
    // instants, but their days differ in summer: the zone is part of the key, so times of each zone (and the
    // undimensioned query of each) answer apart; a printer given both refuses them.
    const inUtc = rangeOfDates('2026-03-01', '2026-11-30', 'UTC');
    const inLondon = rangeOfDates('2026-03-01', '2026-11-30', 'Europe/London');
    expect([inLondon.from, inLondon.to]).toEqual([inUtc.from, inUtc.to]);
    const zoned = (range: AnalyticsQuery['range'], dimensions: Dimension[]) =>
      planAnalyticsQuery(queryOver(range, { timeZone: range.timeZone, dimensions }), asOnS3);
    const plans = [zoned(inUtc, ['date']), zoned(inLondon, ['date']), zoned(inLondon, []), zoned(inUtc, ['country'])];
    expect(JSON.stringify(plans[0]!.segments)).not.toBe(JSON.stringify(plans[1]!.segments));
    expect(sharedScanKey(plans[0]!)).not.toBe(sharedScanKey(plans[1]!));
    expect(sharedScanGroups(plans)).toEqual([
      [0, 3],
      [1, 2],
    ]);
    expect(() => printSharedScan(plans.slice(0, 2), { dialect: duckdbDialect, catalog: asOnS3 })).toThrow(/one zone/);
  });
});
