import type { SqlQuery } from '../sql/sql.js';
import type { BatchedStatement } from '../sql/statement-batch.js';
import {
  isRowFieldDimension,
  isSessionPage,
  isTimeDimension,
  type Dimension,
  type TimeDimension,
  type Metric,
  type SessionPageDimension,
} from '../../requests/query.js';
import type { Dialect } from '../sql/dialect.js';
import type { SqlTarget } from '../sql/target.js';
import { localSeconds, scopedEvents } from '../scope/event-scope.js';
import { missingLabel, type RowFilterField } from '../../requests/filters.js';
import { filterColumns, pathListPredicate, rowFieldColumns, rowPredicate } from '../scope/filters.js';
import { isRevenueAggregate, type QueryPlan, type RowAggregate } from './plan.js';
import { arePiecesPickedByPaths, type RowSource, type SessionSource } from './sources.js';
import { scopedBuckets } from '../derived/pageview-buckets.js';
import { scopedCustomEventBuckets } from '../derived/custom-event-buckets.js';
import { combinedAttribute, sessionPieces, type FragmentAttribute } from '../derived/session-fragments.js';
import { scopedSessionCounts } from '../derived/session-counts.js';
import { bitmapVisitorCounts } from '../derived/visitor-bitmaps.js';
import { integer, join, print, sql, str, trusted, type Sql } from '../sql/sql.js';

// Prints a QueryPlan as one SQL statement. Shape (CTEs only where the plan needs them):
//   base             rows of the scope, only the needed columns
//   filter_visitors_N visitors who did what a visitor filter asks, anywhere in the range (from the event rows or
//                    the custom-event buckets)
//   kept             base rows passing the row filters, of visitors passing the visitor filters
//   event_segments   (event dimension) which visitors triggered which custom event (from the same)
//   row_metrics      pageviews, visitors, revenue, conversions per group of kept rows (or visitors and
//                    pageviews per group of stored pageview buckets, when the plan says they apply)
//   sessions         every kept session, measured over all its rows in the range, with its entry values (with
//                    session fragments: whole fragments as they are, the other pieces merged per session)
//   session_metrics  sessions, bounces and mean duration per group (where the sources read session counts: the
//                    whole fragments' counts plus the merged sessions counted alike, summed per group)
// and a final select that joins the two metric sets per group, computes rates, orders and pages.

export function printAnalyticsQuery(plan: QueryPlan, target: SqlTarget): SqlQuery {
  const { dialect } = target;
  const { rows, sessions } = plan.sources;
  const { events: readsEvents, bucketMatch } = plan.reads;
  const bySegment = plan.dimensions.includes('event');
  const ctes: Sql[] = readsEvents ? [sql`base AS (${baseRows(plan, target)})`] : [];
  ctes.push(...visitorFilterCtes(plan, target));
  const keptConditions = [
    ...[...plan.rowFilters, ...plan.sessionFilters].map((f) => rowPredicate(f, dialect)),
    ...plan.visitorFilters.map((_, i) => sql`visitor_id IN (SELECT visitor_id FROM filter_visitors_${integer(i)})`),
  ];
  const kept = keptConditions.length ? 'kept' : 'base';
  if (readsEvents && keptConditions.length) ctes.push(keptCte(plan, keptConditions, dialect));
  if (bySegment) ctes.push(eventSegmentsCte(plan, target));
  // Event rows and sessions meet the segments by id; buckets by the column matched.
  const segmentJoin = bySegment ? sql` JOIN event_segments ON segment_visitor = visitor_id` : sql``;
  const bucketSegmentJoin = bySegment
    ? bucketMatch === 'visitor_key'
      ? sql` JOIN event_segments ON segment_key = visitor_key`
      : segmentJoin
    : sql``;
  const slots = plan.dimensions.map((_, i) => trusted(`d${i}`));
  // Ordinals, not aliases or repeated expressions: Trino resolves neither an alias nor an expression holding
  // a parameter in GROUP BY.
  const groupBy = slots.length ? sql` GROUP BY ${join(slots.map((_, i) => integer(i + 1)))}` : sql``;

  if (rows)
    ctes.push(rowMetricsCte(plan, rows, target, { kept, segmentJoin, bucketSegmentJoin, bucketMatch }, groupBy));
  if (sessions) {
    ctes.push(sessionsCte(plan, sessions, target, kept !== 'base'));
    ctes.push(sessionMetricsCte(plan, sessions, target, { slots, groupBy, segmentJoin }));
  }

  const from = fromClause(rows !== null, sessions !== null, slots.length);
  const select = [
    ...plan.dimensions.map((d, i) => dimensionOutput(d, i, rows !== null, sessions !== null, dialect)),
    ...plan.metrics.map((m) => sql`${metricSql[m]} AS ${trusted(m)}`),
  ];
  const orderBy = plan.order.length
    ? sql` ORDER BY ${join(plan.order.map((o) => trusted(`${o.column} ${o.direction.toUpperCase()}`)))}`
    : sql``;

  return print(sql`WITH ${join(ctes, ',\n')}
SELECT ${join(select)}
FROM ${from}${orderBy}
OFFSET ${integer(plan.page.offset)} LIMIT ${integer(plan.page.limit + 1)}`);
}

/** The printed statement with its output columns and order, as a batch of statements merges it (statement-batch.ts). */
export function printAnalyticsStatement(plan: QueryPlan, target: SqlTarget): BatchedStatement {
  return {
    query: printAnalyticsQuery(plan, target),
    columns: [...plan.dimensions.map((_, i) => `d${i}`), ...plan.metrics],
    order: plan.order,
  };
}

/**
 * `base`: the scope's rows, with their session's entry and exit pages where the plan groups by them, found by a
 * window over the same read (a join with the sessions would read the rows twice on Trino, which inlines CTEs).
 * Rows without a session (server-side revenue) have none.
 */
export function baseRows(plan: QueryPlan, target: SqlTarget): Sql {
  const scoped = scopedEvents(target, plan.scope, plan.columns, plan.segments, 'local_s');
  if (plan.sessionPages.length === 0) return scoped;
  const { dialect } = target;
  const ofPageviews = (column: string) => sql`CASE WHEN type = 'pageview' THEN ${trusted(column)} END`;
  const pages = plan.sessionPages.map((page) => {
    const pick = page === 'entry_page' ? dialect.argMinKeepNull : dialect.argMaxKeepNull;
    return sql`CASE WHEN session_id <> '' THEN ${pick(ofPageviews('url_path'), ofPageviews('ts'))} OVER (PARTITION BY session_id) END AS ${trusted(page)}`;
  });
  return sql`SELECT ${join([sql`*`, ...pages])} FROM (${scoped}) scoped`;
}

/** The rows a visitor filter or the event segments test: the custom-event buckets or the base rows (plan.sources). */
function eventVisitorRows(plan: QueryPlan, target: SqlTarget, columns: string[]): Sql {
  return plan.sources.eventVisitors?.from === 'buckets'
    ? sql`(${scopedCustomEventBuckets(target, plan.scope, [...plan.reads.visitorColumns, ...columns])}) custom_events`
    : trusted('base');
}

/** `filter_visitors_<i>`: the visitors each visitor filter keeps, by the columns plan.reads names. */
function visitorFilterCtes(plan: QueryPlan, target: SqlTarget): Sql[] {
  const columns = join(plan.reads.visitorColumns.map((c) => trusted(c)));
  return plan.visitorFilters.map(
    (filter, i) =>
      sql`filter_visitors_${integer(i)} AS (SELECT DISTINCT ${columns} FROM ${eventVisitorRows(plan, target, filterColumns(filter))} WHERE ${rowPredicate(filter, target.dialect)})`,
  );
}

/** `kept`: the base rows passing every row filter and visitor filter; computed once where it is read twice. */
export function keptCte(plan: QueryPlan, conditions: Sql[], dialect: Dialect): Sql {
  const materialized = plan.reads.keptTwice ? dialect.materialized : sql``;
  return sql`kept AS ${materialized}(SELECT * FROM base WHERE ${join(conditions, ' AND ')})`;
}

/** `event_segments`: which visitors triggered which custom event (the event dimension). */
function eventSegmentsCte(plan: QueryPlan, target: SqlTarget): Sql {
  const segmentColumns = plan.reads.visitorColumns.map((c) =>
    trusted(c === 'visitor_id' ? 'visitor_id AS segment_visitor' : 'visitor_key AS segment_key'),
  );
  return sql`event_segments AS (SELECT DISTINCT ${join([sql`event_name AS segment_event`, ...segmentColumns])} FROM ${eventVisitorRows(plan, target, ['type', 'event_name'])} WHERE type = 'event')`;
}

/**
 * `session_metrics`: sessions, bounces and mean duration per group of `sessions` (the CTE), or, where the sources
 * read session counts, the whole fragments' counts plus the merged sessions counted alike, summed per group.
 */
function sessionMetricsCte(
  plan: QueryPlan,
  sessions: SessionSource,
  target: SqlTarget,
  { slots, groupBy, segmentJoin }: { slots: Sql[]; groupBy: Sql; segmentJoin: Sql },
): Sql {
  const bySegment = plan.dimensions.includes('event');
  const perSession = [sql`count(*) AS sessions`, sql`count(*) FILTER (WHERE pageviews = 1) AS bounces`];
  if (sessions.from === 'fragments' && sessions.counts) {
    const [dimension] = plan.dimensions;
    const byAttribute = dimension !== undefined && isRowFieldDimension(dimension) ? dimension : null;
    const counted = byAttribute
      ? [sql`${labelled(trusted('value'), byAttribute)} AS d0`]
      : plan.dimensions.map(
          (d, i) => sql`${timeKey(d as TimeDimension, trusted('local_s'), target.dialect)} AS d${integer(i)}`,
        );
    const by = byAttribute ? { attribute: fragmentAttribute(byAttribute) } : { segments: plan.segments };
    return sql`session_metrics AS (
      SELECT ${join([...slots, sql`sum(sessions) AS sessions`, sql`sum(bounces) AS bounces`, sql`CAST(sum(duration_ms) AS DOUBLE) / sum(sessions) AS duration_ms`])}
      FROM (
        SELECT ${join([...counted, trusted('sessions, bounces, duration_ms')])}
        FROM (${scopedSessionCounts(target, plan.scope, sessions.partitions, by)}) counts
        UNION ALL
        SELECT ${join([...slots, ...perSession, sql`sum(duration_ms) AS duration_ms`])}
        FROM sessions${groupBy}) counted${groupBy})`;
  }
  const segmentDims = bySegment ? [sql`segment_event AS d0`] : [];
  return sql`session_metrics AS (
      SELECT ${join([...(bySegment ? segmentDims : slots), ...perSession, sql`avg(duration_ms) AS duration_ms`])}
      FROM sessions${segmentJoin}${bySegment ? sql` GROUP BY 1` : groupBy})`;
}

/**
 * How row metrics meet the rest of the statement: `kept`, the kept rows' CTE; `segmentJoin` joins event rows to the
 * event segments; `bucketSegmentJoin` joins buckets to them; `bucketMatch`, the buckets' column matched with the
 * visitor filters' visitors.
 */
interface RowMetricsLinks {
  kept: string;
  segmentJoin: Sql;
  bucketSegmentJoin: Sql;
  bucketMatch: 'visitor_key' | 'visitor_id';
}

/**
 * `row_metrics`: the row aggregates per group of kept rows; or, with pageview buckets, visitors and pageviews
 * from the buckets (of the visitors the visitor filters keep; of the segment's visitors, for the event dimension),
 * joined per group with revenue and conversions from the (few) kept revenue rows.
 */
function rowMetricsCte(
  plan: QueryPlan,
  source: RowSource,
  target: SqlTarget,
  { kept, segmentJoin, bucketSegmentJoin, bucketMatch }: RowMetricsLinks,
  groupBy: Sql,
): Sql {
  const dims = plan.dimensions.map((d, i) => sql`${rowDimension(d, target.dialect)} AS d${integer(i)}`);
  if (source.from === 'rows') {
    const types = [...new Set(plan.rowAggregates.map((a) => (isRevenueAggregate(a) ? 'revenue' : 'pageview')))];
    // Rows of one type need no per-aggregate FILTER: the WHERE already holds it, and DuckDB's plain
    // aggregates are cheaper than filtered ones.
    const aggregates = plan.rowAggregates.map((a) => rowAggregateSql(a, types.length > 1, target.dialect));
    return sql`row_metrics AS (
      SELECT ${join([...dims, ...aggregates])}
      FROM ${trusted(kept)}${segmentJoin}
      WHERE type IN (${join(types.map((t) => sql`${str(t)}`))})${groupBy})`;
  }
  const attributes = plan.dimensions.filter(isRowFieldDimension).map((d) => rowFieldColumns[d]);
  const pageviewAggregates = plan.rowAggregates.filter((a) => !isRevenueAggregate(a));
  // Visitors are told apart by the column the sources chose (an integer key where the store has them, cheaper to
  // hash than text); visitor filters and event segments match them by the column their source gives.
  const { visitors } = source;
  const countedColumn = visitors?.count === 'bitmaps' ? 'visitor_key' : visitors?.column;
  const visitorColumn = visitors === null ? null : countedColumn;
  const matched = plan.dimensions.includes('event') || plan.visitorFilters.length > 0;
  const visitorColumns = [...(visitorColumn ? [visitorColumn] : []), ...(matched ? [bucketMatch] : [])];
  const filtered = plan.rowFilters.map((f) => rowFieldColumns[f.field as RowFilterField]);
  const scoped = scopedBuckets(
    target,
    source.relation,
    plan.scope,
    visitorColumns,
    [...attributes, ...filtered],
    plan.segments,
  );
  // A row filter keeps the bucket rows whose grouped column passes; a visitor filter keeps the buckets of the
  // visitors it keeps: each as it keeps their rows.
  const match = trusted(bucketMatch);
  const conditions = [
    ...plan.rowFilters.map((f) => rowPredicate(f, target.dialect)),
    ...plan.visitorFilters.map((_, i) => sql`${match} IN (SELECT ${match} FROM filter_visitors_${integer(i)})`),
  ];
  const buckets = conditions.length ? sql`SELECT * FROM (${scoped}) scoped WHERE ${join(conditions, ' AND ')}` : scoped;
  const slots = plan.dimensions.map((_, i) => `d${i}`);
  const visitorsAndPageviews =
    pageviewAggregates.includes('visitors') && pageviewAggregates.includes('pageviews') && visitorColumn !== null;
  const fromBuckets =
    visitors?.count === 'bitmaps'
      ? bitmapVisitorCounts(dims, buckets, pageviewAggregates.includes('pageviews'))
      : visitorsAndPageviews && target.dialect.distinctBesideSum === 'pre-grouped'
        ? // One row per group and visitor, then counted: the same visitors and pageviews.
          sql`SELECT ${join([...slots.map((d) => trusted(d)), sql`count(*) AS visitors`, sql`CAST(sum(visitor_pageviews) AS BIGINT) AS pageviews`])}
      FROM (SELECT ${join([...dims, trusted(visitorColumn!), sql`sum(pageviews) AS visitor_pageviews`])}
        FROM (${buckets}) buckets${bucketSegmentJoin} GROUP BY ${join(Array.from({ length: dims.length + 1 }, (_, i) => integer(i + 1)))}) per_visitor${groupBy}`
        : sql`SELECT ${join([
            ...dims,
            ...pageviewAggregates.map((a) =>
              a === 'visitors'
                ? sql`count(DISTINCT ${trusted(visitorColumn!)}) AS visitors`
                : sql`CAST(sum(pageviews) AS BIGINT) AS pageviews`,
            ),
          ])}
      FROM (${buckets}) buckets${bucketSegmentJoin}${groupBy}`;
  const revenueAggregates = plan.rowAggregates.filter(isRevenueAggregate);
  if (revenueAggregates.length === 0) return sql`row_metrics AS (${fromBuckets})`;
  const fromRevenue = sql`SELECT ${join([...dims, ...revenueAggregates.map((a) => rowAggregateSql(a, false, target.dialect))])}
      FROM ${trusted(kept)}${segmentJoin} WHERE type = 'revenue'${groupBy}`;
  const on = slots.map((d) => trusted(`p.${d} = v.${d}`));
  return sql`row_metrics AS (
      SELECT ${join([
        ...slots.map((d) => trusted(`coalesce(p.${d}, v.${d}) AS ${d}`)),
        ...pageviewAggregates.map((a) => trusted(`p.${a}`)),
        // Zero, not NULL, for groups without revenue rows: what the filtered aggregates of the row form give.
        ...revenueAggregates.map((a) => trusted(`coalesce(v.${a}, 0) AS ${a}`)),
      ])}
      FROM (${fromBuckets}) p ${slots.length ? sql`FULL OUTER JOIN (${fromRevenue}) v ON ${join(on, ' AND ')}` : sql`CROSS JOIN (${fromRevenue}) v`})`;
}

const rowAggregateParts = (dialect: Dialect): Record<RowAggregate, [aggregate: Sql, type: string]> => ({
  pageviews: [sql`count(*)`, 'pageview'],
  visitors: [sql`count(DISTINCT visitor_id)`, 'pageview'],
  revenue: [dialect.exactSum(trusted('amount_cents')), 'revenue'],
  conversions: [sql`count(DISTINCT visitor_id)`, 'revenue'],
});

function rowAggregateSql(name: RowAggregate, filtered: boolean, dialect: Dialect): Sql {
  const [aggregate, type] = rowAggregateParts(dialect)[name];
  return sql`${aggregate}${filtered ? sql` FILTER (WHERE type = ${trusted(`'${type}'`)})` : sql``} AS ${trusted(name)}`;
}

export const metricSql: Record<Metric, Sql> = {
  pageviews: sql`coalesce(r.pageviews, 0)`,
  visitors: sql`coalesce(r.visitors, 0)`,
  revenue: sql`coalesce(r.revenue, 0)`,
  conversions: sql`coalesce(r.conversions, 0)`,
  conversion_rate: sql`CASE WHEN coalesce(r.visitors, 0) = 0 THEN 0 ELSE round(100 * CAST(r.conversions AS DOUBLE) / r.visitors, 2) END`,
  bounce_rate: sql`CASE WHEN coalesce(s.sessions, 0) = 0 THEN 0 ELSE round(100 * CAST(s.bounces AS DOUBLE) / s.sessions, 2) END`,
  avg_session_duration: sql`coalesce(round(s.duration_ms / 1000, 2), 0)`,
  visits: sql`coalesce(s.sessions, 0)`,
};

function fromClause(rows: boolean, sessions: boolean, dimensionCount: number): Sql {
  if (rows && !sessions) return sql`row_metrics r`;
  if (sessions && !rows) return sql`session_metrics s`;
  if (dimensionCount === 0) return sql`row_metrics r CROSS JOIN session_metrics s`;
  const on = Array.from({ length: dimensionCount }, (_, i) => trusted(`r.d${i} = s.d${i}`));
  return sql`row_metrics r FULL OUTER JOIN session_metrics s ON ${join(on, ' AND ')}`;
}

function dimensionOutput(dimension: Dimension, i: number, rows: boolean, sessions: boolean, dialect: Dialect): Sql {
  const value = trusted(rows && sessions ? `coalesce(r.d${i}, s.d${i})` : `${rows ? 'r' : 's'}.d${i}`);
  return sql`${isTime(dimension) ? timeLabel(dimension, value, dialect) : value} AS ${trusted(`d${i}`)}`;
}

// Time buckets group on an integer key, the local hours since KEY_EPOCH or the local day since KEY_EPOCH that
// starts the day, week or month (localSeconds), and become text only in the final select: formatting every row
// before grouping costs far more. KEY_EPOCH, a Tuesday, lies two days before 1970-01-01, so no local time of a
// range (floored at 1970-01-01 UTC, offsets down to -12 h) is negative and integer division floors.
const isTime = isTimeDimension;
const KEY_EPOCH = sql`TIMESTAMP '1969-12-30 00:00:00'`;
const KEY_EPOCH_SECONDS = 2 * 86_400;
const DAY = sql`INTERVAL '1' DAY`;

/** The key of a local time given as integer seconds (localSeconds in event-scope.ts). */
function timeKey(dimension: TimeDimension, localSeconds: Sql, dialect: Dialect): Sql {
  const since = sql`${localSeconds} + ${integer(KEY_EPOCH_SECONDS)}`;
  if (dimension === 'hour') return dialect.integerDivide(since, integer(3_600));
  if (dimension === 'minute') return dialect.integerDivide(since, integer(60));
  const day = dialect.integerDivide(since, integer(86_400));
  if (dimension === 'date') return day;
  // Day 0 is a Tuesday: (day + 1) % 7 days have passed since the week's Monday.
  if (dimension === 'week') return sql`(${day} - (${day} + 1) % 7)`;
  return sql`(${day} - (day(${KEY_EPOCH} + ${day} * ${DAY}) - 1))`;
}

export function timeLabel(dimension: TimeDimension, key: Sql, dialect: Dialect): Sql {
  if (dimension === 'hour') return dialect.formatHour(sql`${KEY_EPOCH} + ${key} * INTERVAL '1' HOUR`);
  if (dimension === 'minute') return dialect.formatTimestamp(sql`${KEY_EPOCH} + ${key} * INTERVAL '1' MINUTE`);
  return sql`CAST(CAST(${KEY_EPOCH} + ${key} * ${DAY} AS DATE) AS VARCHAR)`;
}

function labelled(value: Sql, field: RowFilterField): Sql {
  return sql`coalesce(nullif(${value}, ''), ${str(missingLabel(field))})`;
}

/** A row's own value for a dimension. */
export function rowDimension(dimension: Dimension, dialect: Dialect): Sql {
  if (dimension === 'event') return sql`segment_event`;
  if (isTime(dimension)) return timeKey(dimension, trusted('local_s'), dialect);
  if (isSessionPage(dimension)) return labelled(trusted(dimension), 'page');
  return labelled(trusted(rowFieldColumns[dimension]), dimension);
}

/**
 * `sessions`: one row per kept session with its visitor, pageviews, duration and dimension values; grouped
 * from the raw rows, or from session pieces (fragments) when the sources say so. `filtered`: only sessions
 * that kept a row (row or visitor filters).
 */
export function sessionsCte(plan: QueryPlan, source: SessionSource, target: SqlTarget, filtered: boolean): Sql {
  const { dialect } = target;
  const keptSessions = filtered ? sql`session_id IN (SELECT session_id FROM kept)` : null;
  const dimensions = plan.dimensions.flatMap((d, i) => (d === 'event' ? [] : [{ d, slot: integer(i) }]));
  if (source.from === 'rows') {
    const dims = dimensions.map(({ d, slot }) => sql`${sessionDimension(d, dialect)} AS d${slot}`);
    return sql`sessions AS (
      SELECT ${join([
        sql`min(visitor_id) AS visitor_id`,
        sql`count(*) FILTER (WHERE type = 'pageview') AS pageviews`,
        sql`date_diff('millisecond', min(ts), max(ts)) AS duration_ms`,
        ...dims,
      ])}
      FROM base WHERE session_id <> ''${keptSessions ? sql` AND ${keptSessions}` : sql``} GROUP BY session_id)`;
  }
  const fragmentDimensions = dimensions.map(({ d, slot }) => {
    if (isSessionPage(d)) throw new Error(`${d} groups sessions from rows (sources.ts)`);
    return { d, slot };
  });
  const attributes = fragmentDimensions.flatMap(({ d }): FragmentAttribute[] =>
    isTime(d) ? [] : [fragmentAttribute(d)],
  );
  const merged = fragmentDimensions.map(
    ({ d, slot }) => sql`${fragmentDimension(d, dialect, plan, false)} AS d${slot}`,
  );
  const own = fragmentDimensions.map(({ d, slot }) => sql`${fragmentDimension(d, dialect, plan, true)} AS d${slot}`);
  const kept = keptSessions ? sql` WHERE ${keptSessions}` : sql``;
  // A whole fragment holds all its session's rows, so its own paths tell whether the session kept a row: no
  // join of a million fragments to the kept rows' session ids.
  const byPaths =
    source.pick.by === 'paths'
      ? {
          match: pathListPredicate(plan.rowFilters, trusted('url_paths'), dialect),
          rowMatch: join(
            plan.rowFilters.map((f) => rowPredicate(f, dialect)),
            ' AND ',
          ),
          unlisted: source.pick.unlistedByRows,
        }
      : null;
  const pieces = sessionPieces(target, plan.scope, source, attributes, byPaths);
  const mergedByPaths = arePiecesPickedByPaths(source);
  const asSession = sql`SELECT ${join([trusted('visitor_id'), trusted('pageviews'), sql`date_diff('millisecond', first_ts, last_ts) AS duration_ms`, ...own])}`;
  const unlisted = pieces.unlisted
    ? sql`${asSession}
      FROM (${pieces.unlisted}) unlisted_fragments${kept}
      UNION ALL
      `
    : sql``;
  // A whole fragment is a session by itself (docs/STORAGE.md): only the other pieces are merged per session. Where
  // the session counts stand in for the whole fragments, only the merged sessions are listed here.
  const whole =
    source.counts || pieces.whole === null
      ? sql``
      : sql`${asSession}
      FROM (${pieces.whole}) whole_fragments${byPaths ? sql`` : kept}
      UNION ALL
      `;
  return sql`sessions AS (
      ${whole}${unlisted}
      SELECT ${join([
        sql`min(visitor_id) AS visitor_id`,
        sql`sum(pageviews) AS pageviews`,
        sql`date_diff('millisecond', min(first_ts), max(last_ts)) AS duration_ms`,
        ...merged,
      ])}
      FROM (${pieces.merged}) pieces${mergedByPaths ? sql` GROUP BY session_id HAVING bool_or(on_path)` : sql`${kept} GROUP BY session_id`})`;
}

/** A session's dimension value from its pieces (or its whole fragment): the same "where it started" as sessionDimension. */
function fragmentDimension(
  dimension: Exclude<Dimension, 'event' | SessionPageDimension>,
  dialect: Dialect,
  plan: QueryPlan,
  whole: boolean,
): Sql {
  if (isTime(dimension))
    return timeKey(
      dimension,
      localSeconds(dialect, trusted(whole ? 'first_ts' : 'min(first_ts)'), plan.segments!),
      dialect,
    );
  const attribute = fragmentAttribute(dimension);
  return labelled(whole ? trusted(attribute) : combinedAttribute(dialect, attribute), dimension);
}

/** The fragment column holding a session's value of a dimension: where it started (for `page`, its entry page). */
function fragmentAttribute(dimension: RowFilterField): FragmentAttribute {
  return dimension === 'page' ? 'entry_page' : (rowFieldColumns[dimension] as FragmentAttribute);
}

/**
 * A session's value for a dimension: where it started (its first row; for `page`, its first pageview); its entry
 * or exit page as every one of its rows carries it (baseRows).
 */
function sessionDimension(dimension: Exclude<Dimension, 'event'>, dialect: Dialect): Sql {
  const ts = trusted('ts');
  if (isSessionPage(dimension)) return labelled(sql`min(${trusted(dimension)})`, 'page');
  if (isTime(dimension)) return timeKey(dimension, dialect.argMinKeepNull(trusted('local_s'), ts), dialect);
  const first = dialect.argMinKeepNull(trusted(rowFieldColumns[dimension]), ts);
  return labelled(dimension === 'page' ? sql`${first} FILTER (WHERE type = 'pageview')` : first, dimension);
}
