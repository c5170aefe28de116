import { visitorDayColumns } from '../../events/event-columns.js';
import type { Dialect } from '../sql/dialect.js';
import type { SqlTarget } from '../sql/target.js';
import { scopeCondition, type EventScope } from '../scope/event-scope.js';
import type { FullPartitions } from './session-fragments.js';
import { bool, date, join, sql, str, trusted, type Sql } from '../sql/sql.js';

// Visitor days (docs/STORAGE.md): one row per (is_dev, visitor) of one event file, with the visitor's times,
// counts and revenue in that file. A journeys list ranks every visitor of its range; from these it reads about a
// third of the rows and no wide columns, and the sums and extremes combine exactly over any split of a visitor's
// rows, so an import never reads what is stored. Everything that knows their meaning is here.

const pageview = sql`type = 'pageview'`;
const revenue = sql`type = 'revenue'`;
const visitorRevenue = sql`sum(amount_cents) FILTER (WHERE ${revenue})`;

/**
 * The start of the error a visitor-day write stops with when the visitor's revenue in the file leaves the stored
 * BIGINT range (about ±9.2e18 cents), followed by the visitor id and the day.
 */
export const VISITOR_REVENUE_OUT_OF_RANGE = 'revenue past the 64-bit range for visitor ';
const bigintRange = trusted('-9223372036854775808 AND 9223372036854775807');
const outOfRange = sql`error(${trusted(`'${VISITOR_REVENUE_OUT_OF_RANGE}'`)} || visitor_id || ' on ' || strftime(min(ts), '%Y-%m-%d'))`;

/**
 * `SELECT` of the visitor days of `rows` (a relation of event rows), unordered: the writer orders them by
 * `visitorDayFileOrder` after joining keys if it has them. DuckDB only: the writers write them.
 */
export function visitorDaysOf(rows: Sql): Sql {
  const grouped = sql`SELECT ${join([
    trusted('is_dev'),
    trusted('visitor_id'),
    sql`min(ts) AS first_ts`,
    sql`max(ts) AS last_ts`,
    sql`count(*) FILTER (WHERE ${pageview}) AS pageviews`,
    sql`count(*) FILTER (WHERE type = 'event') AS events`,
    // DuckDB sums BIGINT as HUGEINT, which its Parquet writer stores as DOUBLE; Glue declares bigint. A visitor's
    // revenue in one file past the BIGINT range stops the write with VISITOR_REVENUE_OUT_OF_RANGE (derived-writer.ts).
    sql`CASE WHEN ${visitorRevenue} BETWEEN ${bigintRange} THEN CAST(${visitorRevenue} AS BIGINT) WHEN ${visitorRevenue} IS NOT NULL THEN ${outOfRange} END AS revenue_cents`,
    sql`count(*) FILTER (WHERE ${revenue}) AS revenue_events`,
    sql`max(ts) FILTER (WHERE ${revenue}) AS latest_revenue_ts`,
    sql`min(ts) FILTER (WHERE ${pageview}) AS pageview_ts`,
    // The first pageview's attributes as one struct: one aggregate state, all from the same row.
    sql`arg_min_null({${join(firstPageviewAttributes.map(([name, column]) => trusted(`'${name}': ${column}`)))}}, ts) FILTER (WHERE ${pageview}) AS first_pageview`,
    // Sorted only so that a file's bytes depend on its rows alone.
    sql`list(DISTINCT session_id ORDER BY session_id) FILTER (WHERE session_id <> '') AS session_ids`,
  ])}
FROM ${rows} GROUP BY is_dev, visitor_id`;
  return sql`SELECT ${join([
    trusted(
      'is_dev, visitor_id, first_ts, last_ts, pageviews, events, revenue_cents, revenue_events, latest_revenue_ts',
    ),
    sql`CASE WHEN pageview_ts > first_ts THEN pageview_ts END AS first_pageview_ts`,
    ...firstPageviewAttributes.map(([name]) => trusted(`first_pageview.${name} AS ${name}`)),
    // Empty when every row of the visitor lacks a session id.
    sql`coalesce(session_ids, []) AS session_ids`,
    // Given by the store's keying pass (local/store/visitor-keys.ts), or joined in by a writer that knows the keys.
    sql`CAST(NULL AS BIGINT) AS visitor_key`,
  ])}
FROM (${grouped})`;
}

/** The first pageview's attributes a visitor day keeps: stored name and event column. */
const firstPageviewAttributes = [
  ['country', 'country'],
  ['browser', 'browser'],
  ['os', 'os'],
  ['device', 'device'],
  ['referrer_domain', 'referrer_domain'],
  ['entry_page', 'url_path'],
] as const;
type FirstPageviewAttribute = (typeof firstPageviewAttributes)[number][0];

/** The order of a visitor-day file's rows. */
export const visitorDayFileOrder = 'visitor_id';

/** The per-visitor aggregates a list can rank and bound by, combined over pieces (stored days or single rows). */
export const combinedVisitorAggregates = (dialect: Dialect) =>
  ({
    first_ts: sql`min(first_ts)`,
    last_ts: sql`max(last_ts)`,
    pageview_count: sql`sum(pageviews)`,
    total_revenue_cents: sql`coalesce(${dialect.exactSum(trusted('revenue_cents'))}, 0)`,
    revenue_event_count: sql`sum(revenue_events)`,
    latest_revenue_ts: sql`max(latest_revenue_ts)`,
  }) as const;

/** A piece's columns: the stored ones but the key's is_dev (the scope fixes it) and the visitor's key, in stored order. */
export type PieceColumn = Exclude<(typeof visitorDayColumns)[number][0], 'is_dev' | 'visitor_key'>;
const pieceColumns = visitorDayColumns
  .map(([name]) => name)
  .filter((name): name is PieceColumn => name !== 'is_dev' && name !== 'visitor_key');

/** The piece columns a list's first pass ranks and bounds by (combinedVisitorAggregates). */
export const rankingPieceColumns: readonly PieceColumn[] = [
  'visitor_id',
  'first_ts',
  'last_ts',
  'pageviews',
  'events',
  'revenue_cents',
  'revenue_events',
  'latest_revenue_ts',
];

/** Every piece column: what a listed visitor's details combine (combinedVisitorDetails, journeys/print-list.ts). */
export const detailPieceColumns: readonly PieceColumn[] = pieceColumns;

/**
 * Each piece column computed from one event row. A row that is a pageview is its own first pageview, at its
 * `first_ts`, so `first_pageview_ts` stays NULL as in a stored day whose first row is a pageview.
 */
const rowAsPiece = (dialect: Dialect): Record<PieceColumn, Sql> => ({
  visitor_id: trusted('visitor_id'),
  first_ts: sql`ts AS first_ts`,
  last_ts: sql`ts AS last_ts`,
  pageviews: sql`CASE WHEN ${pageview} THEN 1 ELSE 0 END AS pageviews`,
  events: sql`CASE WHEN type = 'event' THEN 1 ELSE 0 END AS events`,
  revenue_cents: sql`CASE WHEN ${revenue} THEN amount_cents END AS revenue_cents`,
  revenue_events: sql`CASE WHEN ${revenue} THEN 1 ELSE 0 END AS revenue_events`,
  latest_revenue_ts: sql`CASE WHEN ${revenue} THEN ts END AS latest_revenue_ts`,
  first_pageview_ts: sql`CAST(NULL AS TIMESTAMP) AS first_pageview_ts`,
  ...(Object.fromEntries(
    firstPageviewAttributes.map(([name, column]) => [
      name,
      sql`CASE WHEN ${pageview} THEN ${trusted(column)} END AS ${trusted(name)}`,
    ]),
  ) as Record<FirstPageviewAttribute, Sql>),
  session_ids: sql`${dialect.stringListOf(trusted('session_id'), sql`session_id <> ''`)} AS session_ids`,
});

/** The time of a piece's first pageview (its pageviews > 0). */
const pieceFirstPageview = sql`coalesce(first_pageview_ts, first_ts)`;

/**
 * `value` (of the pieces' first-pageview columns) at the visitor's first pageview over its pieces; NULL when it has
 * none. The pieces' counterpart of a first pageview over rows.
 */
export const atFirstPageview = (dialect: Dialect, value: Sql) =>
  sql`${dialect.argMinKeepNull(value, pieceFirstPageview)} FILTER (WHERE pageviews > 0)`;

/**
 * The pieces of a range's visitors: the stored visitor days of its full partitions, plus every row of the
 * partial partitions at its ends as a one-row piece (a stored day of a partial partition would hold rows outside
 * the range). Each carries `columns` (by default what the ranking needs); grouped by visitor_id they give
 * `combinedVisitorAggregates`, and with detailPieceColumns a listed visitor's details. Each piece's `dt` is a partition
 * that holds rows of its visitor in the range. With `keys` (a catalog with visitorDayKeys) each piece also carries
 * `visitor_key`: a row's is its visitor's key in the visitor days of the row's own partition, which hold every
 * visitor of that partition's files.
 */
export function visitorPieces(
  { catalog, dialect }: SqlTarget,
  scope: EventScope & { range: NonNullable<EventScope['range']> },
  partitions: FullPartitions,
  { columns = rankingPieceColumns, keys = false }: { columns?: readonly PieceColumn[]; keys?: boolean } = {},
): Sql {
  const stored = sql`SELECT ${join([...columns.map((c) => trusted(c)), trusted('dt'), ...(keys ? [trusted('visitor_key')] : [])])} FROM ${catalog.tables.visitorDays}
    WHERE domain = ${str(scope.domain)} AND dt BETWEEN ${date(partitions.dtFrom)} AND ${date(partitions.dtTo)} AND is_dev = ${bool(scope.isDev)}`;
  const { range } = scope;
  if (range.from >= partitions.from && range.to <= partitions.to) return stored;
  const partial = sql`(dt < ${date(partitions.dtFrom)} OR dt > ${date(partitions.dtTo)})`;
  const rows = sql`SELECT ${join([...columns.map((c) => rowAsPiece(dialect)[c]), trusted('dt')])} FROM ${catalog.tables.events}
    WHERE ${scopeCondition(scope)} AND ${partial}`;
  if (!keys) return sql`${stored}\n    UNION ALL\n    ${rows}`;
  return sql`${stored}
    UNION ALL
    SELECT ${join([...columns.map((c) => trusted(`r.${c}`)), trusted('r.dt'), trusted('k.visitor_key')])} FROM (${rows}) r
    LEFT JOIN (SELECT DISTINCT visitor_id, visitor_key FROM ${catalog.tables.visitorDays}
      WHERE domain = ${str(scope.domain)} AND dt BETWEEN ${date(range.dtFrom)} AND ${date(range.dtTo)} AND ${partial} AND is_dev = ${bool(scope.isDev)}) k
    ON k.visitor_id = r.visitor_id`;
}
