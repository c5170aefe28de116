import { isRowFieldDimension, isTimeDimension, type Dimension, type Metric } from '../../requests/query.js';
import type { RowFilterField } from '../../requests/filters.js';
import type { BatchedStatement } from '../sql/statement-batch.js';
import type { SqlTarget } from '../sql/target.js';
import { integer, join, print, sql, trusted, type Sql } from '../sql/sql.js';
import { rowFieldColumns, rowPredicate } from '../scope/filters.js';
import { scopedBuckets } from '../derived/pageview-buckets.js';
import { baseRows, keptCte, metricSql, rowDimension, sessionsCte, timeLabel } from './print.js';
import { isRevenueAggregate, type OrderTerm, type QueryPlan } from './plan.js';
import { groupingSetOf } from './shared-scan.js';
import type { RowSource, SessionSource } from './sources.js';

// Prints plans of one shared scan (shared-scan.ts) as one statement that reads each relation once:
//   base, kept       where revenue or the sessions picked by the kept rows read them, the event rows (as print.ts
//                    prints them)
//   row_metrics      visitors and pageviews from one read of each bucket relation (its rows the filters keep),
//                    GROUP BY GROUPING SETS, a set per plan asking for them; with revenue, joined per set and group
//                    with revenue and conversions from the kept revenue rows (bucket_metrics, revenue_metrics)
//   sessions         every kept session of the range merged from its fragments once, with each dimension's value
//   session_metrics  sessions, bounces and mean duration, GROUPING SETS, a set per plan asking for them
// joined per grouping set (named by grouping()'s bits) and group, each plan's rows numbered in its own order and
// paged, then split back: each plan's rows as printAnalyticsQuery's statement alone gives them, the same values by
// the same expressions (metricSql), grouped alike. An attribute groups by its labelled value, never NULL or '', a
// time by its integer key, never negative, labelled once joined: NULL stands for "not grouped".

export interface SharedScan {
  /** One statement, as a batch of statements takes it (statement-batch.ts). */
  statement: BatchedStatement;
  /** The statement's rows as each plan's own, in the plans' order. */
  split<Row extends Record<string, unknown>>(rows: readonly Row[]): Row[][];
}

export function printSharedScan(plans: readonly QueryPlan[], target: SqlTarget): SharedScan {
  const { dialect } = target;
  // Every plan's dimensions, once each, as the union columns u0, u1, ...: an attribute's labelled value (text), a
  // time's integer key (print.ts, timeKey), labelled only in the joined rows.
  const union: Dimension[] = [...new Set(plans.flatMap((p) => p.dimensions))];
  if (union.some((d) => !isRowFieldDimension(d) && !isTimeDimension(d)))
    throw new Error('a shared scan groups by attributes and times only');
  const u = (d: Dimension) => trusted(`u${union.indexOf(d)}`);
  // The offsets of the plans' zone over the range, where a time groups (sharedScanGroups: one for all).
  const segments = plans.find((p) => p.segments)?.segments;
  const timed = (plan: QueryPlan) => (segments ? { ...plan, segments } : plan);
  /** NULL of a union column's type, and the value standing for "not grouped" where two sides meet. */
  const typed = (d: Dimension) =>
    isTimeDimension(d)
      ? { none: sql`CAST(NULL AS BIGINT)`, absent: sql`-1` }
      : { none: sql`CAST(NULL AS VARCHAR)`, absent: sql`''` };
  const meet = (a: string, b: string, d: Dimension) =>
    sql`coalesce(${trusted(a)}.${u(d)}, ${typed(d).absent}) = coalesce(${trusted(b)}.${u(d)}, ${typed(d).absent})`;
  // One grouping set per set of dimensions and of sides read (rows, revenue, sessions): plans of one set read its
  // groups, each in its own order and page (a map and a card by country).
  const shapes = [...new Set(plans.map((p) => groupingSetOf(p).key))];
  const setOf = (p: QueryPlan) => shapes.indexOf(groupingSetOf(p).key);
  // What sharedScanGroups holds to: one zone for the times (the scope's), the same sides for plans grouped alike (a
  // set of dimensions twice in GROUPING SETS would give its groups twice). A row of no plan stops the split.
  const zones = new Set(plans.flatMap((p) => (p.segments ? [JSON.stringify(p.segments)] : [])));
  const dimensionSets = new Set(plans.map((p) => groupingSetOf(p).set));
  if (zones.size > 1 || dimensionSets.size < shapes.length)
    throw new Error('a shared scan groups in one zone, each set of dimensions from the same sides');
  /** `ps`, one plan of each grouping set. */
  const oneEach = (ps: readonly QueryPlan[]) => ps.filter((p, i) => ps.findIndex((q) => setOf(q) === setOf(p)) === i);
  // The plans' row filters, one list for all (sharedScanKey).
  const filters = plans[0]!.rowFilters;
  const conditions = filters.map((f) => rowPredicate(f, dialect));
  const rowPlans = plans.filter((p) => p.sources.rows !== null);
  const sessionPlans = plans.filter((p) => p.sources.sessions !== null);
  const ctes: Sql[] = [];
  const rowDims = union.filter((d) => rowPlans.some((p) => p.dimensions.includes(d)));
  const sessionDims = union.filter((d) => sessionPlans.some((p) => p.dimensions.includes(d)));

  const aggregates = new Set(rowPlans.flatMap((p) => p.rowAggregates.filter((a) => !isRevenueAggregate(a))));
  const revenuePlans = rowPlans.filter((p) => p.rowAggregates.some(isRevenueAggregate));
  const revenueAggregates = new Set(revenuePlans.flatMap((p) => p.rowAggregates.filter(isRevenueAggregate)));
  const revenueDims = union.filter((d) => revenuePlans.some((p) => p.dimensions.includes(d)));
  // The event rows, where revenue or the sessions picked by the kept rows read them, as each plan reads them
  // (print.ts: `base`, and `kept` with filters). Referenced by both, Trino reads them twice, as each plan alone does.
  const sessionsByRows =
    filters.length > 0 &&
    sessionPlans.some((p) => p.sources.sessions?.from === 'fragments' && p.sources.sessions.pick.by === 'kept-rows');
  const rowReaders = [...revenuePlans, ...(sessionsByRows ? sessionPlans : [])];
  if (rowReaders.length) {
    const reading = timed({
      ...rowReaders[0]!,
      columns: [...new Set(rowReaders.flatMap((p) => p.columns))],
    } as QueryPlan);
    ctes.push(sql`base AS (${baseRows(reading, target)})`);
    if (filters.length) ctes.push(keptCte(reading, conditions, dialect));
  }
  const keptRows = trusted(filters.length ? 'kept' : 'base');
  const preGrouped =
    aggregates.has('visitors') && aggregates.has('pageviews') && dialect.distinctBesideSum === 'pre-grouped';
  if (rowPlans.length) {
    const counted = rowPlans.map((p) => p.sources.rows).find((rows) => rows?.from === 'buckets' && rows.visitors);
    const visitorColumn =
      counted?.from === 'buckets' && counted.visitors?.count === 'distinct' ? counted.visitors.column : null;
    if (aggregates.has('visitors') && !visitorColumn) throw new Error('a shared scan counts distinct visitors');
    const relations = [...new Set(rowPlans.map((p) => bucketSource(p).relation))];
    // Each bucket relation read once, its plans' groups with the same columns as every other's (NULL where not
    // grouped), so the relations' metrics stack.
    const perRelation = relations.map((relation) => {
      const own = rowPlans.filter((p) => bucketSource(p).relation === relation);
      const dims = rowDims.filter((d) => own.some((p) => p.dimensions.includes(d)));
      const scoped = scopedBuckets(
        target,
        relation,
        plans[0]!.scope,
        visitorColumn ? [visitorColumn] : [],
        [
          ...dims.filter(isRowFieldDimension).map((d) => rowFieldColumns[d]),
          ...filters.map((f) => rowFieldColumns[f.field as RowFilterField]),
        ],
        dims.some(isTimeDimension) ? segments : undefined,
      );
      // A row filter keeps the bucket rows whose column passes, as it keeps their rows (print.ts, rowMetricsCte).
      const kept = filters.length ? sql` WHERE ${join(conditions, ' AND ')}` : sql``;
      const buckets = sql`SELECT ${join([
        ...dims.map((d) => sql`${rowDimension(d, dialect)} AS ${u(d)}`),
        ...(visitorColumn ? [sql`${trusted(visitorColumn)} AS visitor`] : []),
        trusted('pageviews'),
      ])} FROM (${scoped}) scoped${kept}`;
      const columns = dims.map(u);
      const stacked = rowDims.map((d) => (dims.includes(d) ? u(d) : sql`${typed(d).none} AS ${u(d)}`));
      const setColumn = groupingSetColumn(own, dims);
      if (preGrouped)
        // One row per set, group and visitor, then counted: the same visitors and pageviews (print.ts, rowMetricsCte).
        return sql`SELECT ${join([trusted('grouping_set'), ...stacked, sql`count(*) AS visitors`, sql`CAST(sum(visitor_pageviews) AS BIGINT) AS pageviews`])}
      FROM (SELECT ${join([sql`${setColumn} AS grouping_set`, ...columns, trusted('visitor'), sql`sum(pageviews) AS visitor_pageviews`])}
        FROM (${buckets}) buckets GROUP BY GROUPING SETS (${join(oneEach(own).map((p) => groupingSet(p.dimensions, [trusted('visitor')])))})) per_visitor
      GROUP BY ${join([trusted('grouping_set'), ...columns])}`;
      return sql`SELECT ${join([trusted('grouping_set'), ...stacked, ...[...aggregates].sort().map((a) => trusted(a))])}
      FROM (SELECT ${join([
        sql`${setColumn} AS grouping_set`,
        ...columns,
        ...(aggregates.has('visitors') ? [sql`count(DISTINCT visitor) AS visitors`] : []),
        ...(aggregates.has('pageviews') ? [sql`CAST(sum(pageviews) AS BIGINT) AS pageviews`] : []),
      ])}
      FROM (${buckets}) buckets GROUP BY GROUPING SETS (${join(oneEach(own).map((p) => groupingSet(p.dimensions)))})) grouped`;
    });
    const stackedBuckets = join(perRelation, '\n      UNION ALL\n      ');
    if (revenuePlans.length === 0) ctes.push(sql`row_metrics AS (${stackedBuckets})`);
    else {
      // Revenue and conversions from the kept revenue rows, a set per plan asking for them, joined to its groups
      // of buckets as print.ts joins them (zero, not NULL, where a group has no revenue row).
      const revenueColumns = revenueDims.map(u);
      ctes.push(
        sql`bucket_metrics AS (${stackedBuckets})`,
        sql`revenue_metrics AS (
      SELECT ${join([
        sql`${groupingSetColumn(revenuePlans, revenueDims)} AS grouping_set`,
        ...revenueColumns,
        ...(revenueAggregates.has('revenue') ? [sql`${dialect.exactSum(trusted('amount_cents'))} AS revenue`] : []),
        ...(revenueAggregates.has('conversions') ? [sql`count(DISTINCT visitor_id) AS conversions`] : []),
      ])}
      FROM (SELECT ${join([...revenueDims.map((d) => sql`${rowDimension(d, dialect)} AS ${u(d)}`), ...(revenueAggregates.has('revenue') ? [trusted('amount_cents')] : []), trusted('visitor_id')])}
        FROM ${keptRows} WHERE type = 'revenue') revenue_rows
      GROUP BY GROUPING SETS (${join(oneEach(revenuePlans).map((p) => groupingSet(p.dimensions)))}))`,
        sql`row_metrics AS (
      SELECT ${join([
        sql`coalesce(p.grouping_set, v.grouping_set) AS grouping_set`,
        ...rowDims.map((d) =>
          revenueDims.includes(d) ? sql`coalesce(p.${u(d)}, v.${u(d)}) AS ${u(d)}` : sql`p.${u(d)} AS ${u(d)}`,
        ),
        ...[...aggregates].map((a) => trusted(`p.${a} AS ${a}`)),
        ...[...revenueAggregates].map((a) => trusted(`coalesce(v.${a}, 0) AS ${a}`)),
      ])}
      FROM bucket_metrics p FULL OUTER JOIN revenue_metrics v ON ${join(
        [trusted('p.grouping_set = v.grouping_set'), ...revenueDims.map((d) => meet('p', 'v', d))],
        ' AND ',
      )})`,
      );
    }
  }

  const sessionSource = sessionPlans[0]?.sources.sessions as SessionSource | undefined;
  if (sessionSource) {
    for (const p of sessionPlans)
      if (JSON.stringify(p.sources.sessions) !== JSON.stringify(sessionSource))
        throw new Error('a shared scan reads one session source');
    // The sessions of every plan at once: a plan grouped by all their dimensions, each in a slot d<i> in turn.
    const all = timed({ ...sessionPlans[0]!, dimensions: sessionDims } as QueryPlan);
    ctes.push(sessionsCte(all, sessionSource, target, sessionsByRows));
    ctes.push(sql`session_metrics AS (
      SELECT ${join([
        sql`${groupingSetColumn(sessionPlans, sessionDims)} AS grouping_set`,
        ...sessionDims.map(u),
        sql`count(*) AS sessions`,
        sql`count(*) FILTER (WHERE pageviews = 1) AS bounces`,
        sql`avg(duration_ms) AS duration_ms`,
      ])}
      FROM (SELECT ${join([...sessionDims.map((d, i) => sql`${trusted(`d${i}`)} AS ${u(d)}`), trusted('pageviews'), trusted('duration_ms')])} FROM sessions) sessions_by_value
      GROUP BY GROUPING SETS (${join(oneEach(sessionPlans).map((p) => groupingSet(p.dimensions)))}))`);
  }

  // Row and session metrics meet per plan and group, as each plan's statement joins them (fromClause in print.ts):
  // a plan's rows come from the side(s) it asks of, the other side holding no set of it. A plan without dimensions
  // has its one row whatever was read: where the pre-grouped counts give none for an empty range, the anchor gives
  // it (its metrics then 0, as the plan's own statement gives them).
  const sides = [
    ...(rowPlans.length ? [{ alias: 'r', dims: rowDims }] : []),
    ...(sessionSource ? [{ alias: 's', dims: sessionDims }] : []),
  ];
  const undimensioned = rowPlans.find((p) => p.dimensions.length === 0);
  const anchor = preGrouped && undimensioned ? setOf(undimensioned) : null;
  const either = (column: string, having: typeof sides, extra: string[] = []) => {
    const values = [...having.map(({ alias }) => `${alias}.${column}`), ...extra];
    return trusted(values.length === 1 ? values[0]! : `coalesce(${values.join(', ')})`);
  };
  const both = sides.length === 2;
  let from = both
    ? sql`row_metrics r FULL OUTER JOIN session_metrics s ON ${join(
        [
          trusted('r.grouping_set = s.grouping_set'),
          ...rowDims.filter((d) => sessionDims.includes(d)).map((d) => meet('r', 's', d)),
        ],
        ' AND ',
      )}`
    : sql`${trusted(rowPlans.length ? 'row_metrics r' : 'session_metrics s')}`;
  if (anchor !== null)
    from = sql`${from} FULL OUTER JOIN (VALUES (${integer(anchor)})) AS anchor(grouping_set) ON anchor.grouping_set = ${either('grouping_set', sides)}`;
  const metrics = [...new Set(plans.flatMap((p) => p.metrics))];
  const joined = sql`SELECT ${join([
    sql`${either('grouping_set', sides, anchor === null ? [] : ['anchor.grouping_set'])} AS grouping_set`,
    ...union.map((d) => {
      const value = either(
        `u${union.indexOf(d)}`,
        sides.filter((side) => side.dims.includes(d)),
      );
      // A time's label, as the plan's own statement prints it (print.ts, dimensionOutput).
      return sql`${isTimeDimension(d) ? timeLabel(d, value, dialect) : value} AS ${u(d)}`;
    }),
    ...metrics.map((m) => sql`${metricSql[m]} AS ${trusted(m)}`),
  ])}
    FROM ${from}`;

  // Each plan's order (plan.order) as keys of its own rows only: a numeric or text key per term and direction.
  const keys = orderKeys();
  const byMember = (value: (plan: QueryPlan) => number) =>
    sql`CASE member ${join(
      plans.map((p, i) => sql`WHEN ${integer(i)} THEN ${integer(value(p))}`),
      ' ',
    )} END`;
  const outputs = [trusted('member'), ...union.map(u), ...metrics.map((m) => trusted(m))];
  // Each set's groups once per plan of the set, numbered as that plan orders them.
  const members = join(plans.map((p, i) => sql`(${integer(setOf(p))}, ${integer(i)})`));
  const statement = print(sql`WITH ${join(ctes, ',\n')}
SELECT ${join([...outputs, trusted('rn')])} FROM (
  SELECT ${join([...outputs, sql`row_number() OVER (PARTITION BY member${keys.length ? sql` ORDER BY ${join(keys)}` : sql``}) AS rn`])}
  FROM (${joined}) joined LEFT JOIN (VALUES ${members}) AS members(set_of_member, member) ON members.set_of_member = joined.grouping_set) numbered
WHERE member IS NULL OR (rn > ${byMember((p) => p.page.offset)} AND rn <= ${byMember((p) => p.page.offset + p.page.limit + 1)})`);

  return {
    statement: {
      query: statement,
      columns: ['member', ...union.map((d) => `u${union.indexOf(d)}`), ...metrics, 'rn'],
      order: [
        { column: 'member', direction: 'asc' },
        { column: 'rn', direction: 'asc' },
      ],
    },
    split<Row extends Record<string, unknown>>(rows: readonly Row[]) {
      for (const row of rows)
        if (row.member === null || !(Number(row.member) in plans)) throw new Error('a shared scan row of no query');
      return plans.map((plan, i) =>
        rows
          .filter((row) => Number(row.member) === i)
          .sort((a, b) => Number(a.rn) - Number(b.rn))
          .map(
            (row) =>
              Object.fromEntries([
                ...plan.dimensions.map((d, slot) => [`d${slot}`, row[`u${union.indexOf(d)}`] ?? null]),
                ...plan.metrics.map((m) => [m, row[m] ?? null]),
              ]) as Row,
          ),
      );
    },
  };

  /** `(u.., extra..)`: the grouping set of `dimensions`. */
  function groupingSet(dimensions: readonly Dimension[], extra: Sql[] = []): Sql {
    return sql`(${join([...dimensions.map(u), ...extra])})`;
  }

  /**
   * Which grouping set a group of one side belongs to: grouping() of the side's columns (a bit per column, the first
   * the highest, set where the column is not grouped) names it.
   */
  function groupingSetColumn(sidePlans: readonly QueryPlan[], dims: readonly Dimension[]): Sql {
    if (dims.length === 0) return integer(setOf(sidePlans[0]!));
    const bits = (p: QueryPlan) =>
      dims.reduce((set, d, i) => (p.dimensions.includes(d) ? set : set | (1 << (dims.length - 1 - i))), 0);
    return sql`CASE grouping(${join(dims.map(u))}) ${join(
      oneEach(sidePlans).map((p) => sql`WHEN ${integer(bits(p))} THEN ${integer(setOf(p))}`),
      ' ',
    )} END`;
  }

  function orderKeys(): Sql[] {
    const terms = Math.max(0, ...plans.map((p) => p.order.length));
    const keys: Sql[] = [];
    for (let t = 0; t < terms; t++)
      for (const kind of ['number', 'text'] as const)
        for (const direction of ['asc', 'desc'] as const) {
          const cases = plans.flatMap((p, i) => {
            const term: OrderTerm | undefined = p.order[t];
            if (!term || term.direction !== direction) return [];
            const slot = /^d(\d)$/.exec(term.column);
            if ((slot !== null) !== (kind === 'text')) return [];
            const value = slot
              ? u(p.dimensions[Number(slot[1])]!)
              : sql`CAST(${trusted(term.column as Metric)} AS DOUBLE)`;
            return [sql`WHEN ${integer(i)} THEN ${value}`];
          });
          if (cases.length) keys.push(sql`CASE member ${join(cases, ' ')} END ${trusted(direction.toUpperCase())}`);
        }
    return keys;
  }
}

/** The bucket source of a plan with row metrics (sharedScanKey takes no other). */
function bucketSource(plan: QueryPlan): Extract<RowSource, { from: 'buckets' }> {
  const rows = plan.sources.rows;
  if (rows?.from !== 'buckets') throw new Error('a shared scan reads row metrics from buckets');
  return rows;
}
