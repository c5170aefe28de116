import type { SqlQuery } from '../sql/sql.js';
import type { Dialect } from '../sql/dialect.js';
import { duckdbDialect } from '../sql/dialects.js';
import type { SqlTarget } from '../sql/target.js';
import { localTime, scopeCondition, scopedEvents } from '../scope/event-scope.js';
import { rowPredicate } from '../scope/filters.js';
import type { CutSort, VisitorColumn, VisitorListPlan } from './plan.js';
import { date, int, integer, join, print, sql, str, timestamp, trusted, type Sql } from '../sql/sql.js';
import {
  atFirstPageview,
  combinedVisitorAggregates,
  detailPieceColumns,
  visitorPieces,
} from '../derived/visitor-days.js';
import { bitmapVisitorCounts } from '../derived/visitor-bitmaps.js';

// Prints a VisitorListPlan as one statement per page, in two passes so the costly per-visitor attributes are
// computed for the listed page only (the single-pass form spent most of its time on them for every visitor):
//   ranked_rows      rows of the range, only the columns the first pass needs; or, when the plan allows
//                    (plan.visitorDays), the stored visitor days of its whole partitions (docs/STORAGE.md)
//   earlier_buyers   (first_purchase) visitors with a revenue row before the range, from the domain's earlier partitions
//   visitors         one row per visitor with only the sort key; HAVING applies the filters (some row passes them
//                    all), the strict bounds, has_revenue and first_purchase. Sorted newest last_seen or oldest
//                    first_seen first, without any condition, only the visitors ahead of a cut are grouped
//                    (leadingVisitors)
//   listed           the page: ordered, offset and limited, with the window `total` of every matching visitor
//   details          the page joined to its visitors' pieces: every aggregate and first-pageview attribute over
//                    those pieces only (a second, wider read of the range: cheaper than carrying every column
//                    through the first pass); the pieces are the visitor days of the range's whole partitions where
//                    the store's visitor days carry details (plan.details), else the rows
// and a final select that formats timestamps in the request's zone and keeps the page's order.
// `count` mode prints the same filter answering only that total.
// On DuckDB the details are a statement of their own (hasSeparateDetailsStatement, printListedDetails): the page statement ends
// at `listed` and names the partitions its visitors have rows in, which the details statement then reads alone,
// from the visitor days of their whole partitions where the store's visitor days carry details (docs/STORAGE.md).

const pageview = sql`type = 'pageview'`;
const revenue = sql`type = 'revenue'`;

/** Per-visitor aggregates, by output name. HAVING repeats them, since Trino resolves no alias there. */
const aggregates = (dialect: Dialect): Record<VisitorColumn | 'event_count' | 'revenue_event_count', Sql> => ({
  first_ts: sql`min(ts)`,
  last_ts: sql`max(ts)`,
  pageview_count: sql`count(*) FILTER (WHERE ${pageview})`,
  session_count: sql`count(DISTINCT session_id) FILTER (WHERE session_id <> '')`,
  event_count: sql`count(*) FILTER (WHERE type = 'event')`,
  total_revenue_cents: sql`coalesce(${dialect.exactSum(trusted('amount_cents'))} FILTER (WHERE ${revenue}), 0)`,
  revenue_event_count: sql`count(*) FILTER (WHERE ${revenue})`,
  latest_revenue_ts: sql`max(ts) FILTER (WHERE ${revenue})`,
});

/** `value` on the visitor's first pageview; NULL when they have none (no rows left to aggregate). */
export function firstPageview(dialect: Dialect, value: Sql, name: string): Sql {
  return sql`${dialect.argMinKeepNull(value, trusted('ts'))} FILTER (WHERE ${pageview}) AS ${trusted(name)}`;
}

/** What journeys show as a visitor's source: the referrer domain, or `(direct)`. */
export const referrerSource = sql`coalesce(nullif(referrer_domain, ''), '(direct)')`;

/** The first pageview's fields a list item shows under their own names. */
const shownAttributes = ['country', 'browser', 'os', 'device'];

const listedAttributes = (dialect: Dialect): Sql[] => [
  ...shownAttributes.map((c) => firstPageview(dialect, trusted(c), c)),
  firstPageview(dialect, referrerSource, 'first_referrer'),
  firstPageview(dialect, trusted('url_path'), 'entry_page'),
];

/**
 * The same details (`aggregates` and listedAttributes, named alike) combined over visitor pieces of
 * detailPieceColumns (derived/visitor-days.ts).
 */
const combinedVisitorDetails = (dialect: Dialect): Record<string, Sql> => ({
  ...combinedVisitorAggregates(dialect),
  session_count: dialect.distinctElementCount(trusted('session_ids')),
  event_count: sql`sum(events)`,
  ...Object.fromEntries(shownAttributes.map((c) => [c, atFirstPageview(dialect, trusted(c))])),
  first_referrer: atFirstPageview(dialect, referrerSource),
  entry_page: atFirstPageview(dialect, trusted('entry_page')),
});

type RankAggregate = VisitorColumn | 'revenue_event_count';

/** An aggregate of the first pass: over event rows, or combined over visitor days. */
function rankAggregate(plan: VisitorListPlan, name: RankAggregate, dialect: Dialect): Sql {
  if (plan.ranking.from === 'rows') return aggregates(dialect)[name];
  // The planner reads visitor days only when no session count is asked for.
  if (name === 'session_count') throw new Error('visitor days hold no session counts');
  return combinedVisitorAggregates(dialect)[name];
}

function havingConditions(plan: VisitorListPlan, dialect: Dialect): Sql[] {
  const conditions: Sql[] = [];
  if (plan.filters.length) {
    // Every filter on the same row: `event` filters match event rows, so row fields are those of that event.
    conditions.push(
      sql`count(*) FILTER (WHERE ${join(
        plan.filters.map((f) => rowPredicate(f, dialect)),
        ' AND ',
      )}) > 0`,
    );
  }
  for (const bound of plan.bounds)
    conditions.push(
      sql`${rankAggregate(plan, bound.aggregate, dialect)} ${trusted(bound.operator)} ${int(bound.value)}`,
    );
  if (plan.hasRevenue || plan.firstPurchase)
    conditions.push(sql`${rankAggregate(plan, 'revenue_event_count', dialect)} > 0`);
  if (plan.firstPurchase) conditions.push(sql`visitor_id NOT IN (SELECT visitor_id FROM earlier_buyers)`);
  return conditions;
}

/**
 * The first revenue row ever lies in the range exactly when the visitor has one in the range and none before
 * it, so only the partitions up to the range's start are read, never those after it.
 */
function earlierBuyers(plan: VisitorListPlan, target: SqlTarget): Sql {
  const { domain, isDev, range } = plan.scope;
  const scope = scopeCondition({ domain, isDev, ...(plan.scope.days ? { days: plan.scope.days } : {}) });
  const before = sql`dt <= ${date(range.dtFrom)} AND ts < ${timestamp(range.from)}`;
  return sql`earlier_buyers AS (
    SELECT DISTINCT visitor_id FROM ${target.catalog.tables.events}
    WHERE ${scope} AND ${before} AND ${revenue} AND visitor_id IS NOT NULL)`;
}

/** Pieces read for the cut per visitor the page needs: a visitor may own several of the leading pieces. */
export const CUT_PIECES_PER_VISITOR = 4;

/**
 * `visitors` (the sort value per visitor) and `visitor_total`, for a page sorted by an extreme (CutSort) with no
 * condition on visitors: every visitor whose value lies at or beyond the cut (the value of the Nth leading piece) has
 * a piece there, so grouping the pieces beyond the cut gives those visitors with their exact values, ties at the
 * cut included. When they are fewer than the page needs (offset + limit + 1), every visitor is grouped, as without a
 * cut. The total counts every visitor of the range: by bitmaps of their keys where the pieces carry them
 * (`keys`), else as distinct ids. With keys the visitors' ids are read only where they are grouped: the pieces
 * beyond the cut are read again through a join with the cut, which DuckDB turns into a filter on the scan, so the
 * first pass (`ranked_rows`) holds no text; `visitors` then carries each visitor's key for `listed_days`. DuckDB
 * only: there the cut spares grouping every visitor of the range by id; Athena would read the visitor days three
 * times, and bills by bytes read.
 */
function leadingVisitors(plan: VisitorListPlan, cut: CutSort, pieces: Sql | null): Sql[] {
  const dialect = duckdbDialect;
  const needed = plan.page.offset + plan.page.limit + 1;
  const value = trusted(cut.column);
  const aggregate = rankAggregate(plan, cut.column, dialect);
  const enough = sql`(SELECT count(*) FROM ahead) >= ${integer(needed)}`;
  const key = pieces ? [sql`min(visitor_key) AS visitor_key`] : [];
  const carried = pieces ? [trusted('visitor_key')] : [];
  const all = pieces ? sql`(${pieces}) pieces` : trusted('ranked_rows');
  const beyondCut = pieces
    ? sql`(${pieces}) pieces JOIN cut_edge ON pieces.${value} ${trusted(cut.beyond)} cut_edge.edge`
    : sql`ranked_rows WHERE ${value} ${trusted(cut.beyond)} (SELECT edge FROM cut_edge)`;
  return [
    sql`cut_edge AS (SELECT ${cut.direction === 'desc' ? sql`min` : sql`max`}(${value}) AS edge FROM (
      SELECT ${value} FROM ranked_rows ORDER BY ${value} ${trusted(cut.direction.toUpperCase())} LIMIT ${integer(needed * CUT_PIECES_PER_VISITOR)}))`,
    sql`ahead AS (SELECT ${join([trusted('visitor_id'), sql`${aggregate} AS ${value}`, ...key])} FROM ${beyondCut} GROUP BY visitor_id)`,
    sql`visitors AS (
    SELECT ${join([trusted('visitor_id'), value, ...carried])} FROM ahead WHERE ${enough}
    UNION ALL
    SELECT ${join([trusted('visitor_id'), sql`${aggregate} AS ${value}`, ...key])} FROM ${all} WHERE NOT ${enough} GROUP BY visitor_id)`,
    pieces
      ? sql`visitor_total AS (SELECT visitors AS total FROM (${bitmapVisitorCounts([], sql`SELECT visitor_key FROM ranked_rows`, false)}) counted)`
      : sql`visitor_total AS (SELECT count(DISTINCT visitor_id) AS total FROM ranked_rows)`,
  ];
}

/**
 * The list's page of visitors: with their details (the plan's statements 'one'), or with their sort keys, the window
 * `total` and `listed_days`, the partitions the page's visitors have rows in as comma-separated dates (null when the
 * first pass read rows, which tell no more than the range), for printListedDetails.
 */
export function printVisitorList(plan: VisitorListPlan, target: SqlTarget): SqlQuery {
  return printList(plan, target, plan.statements === 'page-then-details' ? 'listed' : 'page');
}

/**
 * The details of listed visitors (the plan's statements 'page-then-details'): one row per visitor with rows in the
 * range, read only from the partitions `days` names (every partition of the range when null). DuckDB only.
 */
export function printListedDetails(
  plan: VisitorListPlan,
  visitorIds: readonly string[],
  days: readonly string[] | null,
  target: SqlTarget,
): SqlQuery {
  const listed = sql`visitor_id IN (${join(visitorIds.map((id) => sql`${str(id)}`))})${days ? sql` AND dt IN (${join(days.map((d) => sql`${date(d)}`))})` : sql``}`;
  const key = [trusted('visitor_id')];
  // Whole partitions are read as the visitor days (a few rows per visitor, no event row); the rest as rows.
  const details =
    plan.details.from === 'visitor-days'
      ? combinedDetailsCte(
          target.dialect,
          key,
          sql`(SELECT * FROM (${visitorPieces(target, plan.scope, plan.details.partitions, { columns: detailPieceColumns })}) pieces WHERE ${listed}) base`,
        )
      : detailsCte(
          plan,
          target.dialect,
          key,
          sql`(${scopedEvents(target, plan.scope, plan.columns)} AND ${listed}) base`,
          key,
        );
  return print(sql`WITH ${details}
SELECT ${join(detailsOutput(plan, target.dialect))}
FROM details`);
}

/** `details`: per visitor, its details combined over its visitor pieces in `from` (combinedVisitorDetails), with `keys`. */
function combinedDetailsCte(dialect: Dialect, keys: Sql[], from: Sql): Sql {
  return sql`details AS (
    SELECT ${join([...keys, ...Object.entries(combinedVisitorDetails(dialect)).map(([name, value]) => sql`${value} AS ${trusted(name)}`)])}
    FROM ${from}
    GROUP BY ${join(keys)})`;
}

/** The number of visitors the list's filters and bounds keep (`total`). */
export function printVisitorCount(plan: VisitorListPlan, target: SqlTarget): SqlQuery {
  return printList(plan, target, 'count');
}

function printList(plan: VisitorListPlan, target: SqlTarget, mode: 'page' | 'listed' | 'count'): SqlQuery {
  const { dialect } = target;
  const having = havingConditions(plan, dialect);
  const cut = mode === 'count' ? undefined : (plan.cut ?? undefined);
  // The cut's total counts keys by bitmaps where every piece has one.
  const keys = cut !== undefined && plan.cutCountsKeys;
  const ranked =
    plan.ranking.from === 'visitor-days'
      ? visitorPieces(target, plan.scope, plan.ranking.partitions, { keys })
      : scopedEvents(target, plan.scope, plan.rankColumns);
  const ctes: Sql[] = [sql`ranked_rows AS (${ranked})`];
  if (plan.firstPurchase) ctes.push(earlierBuyers(plan, target));
  const sortKeys = [...new Set(plan.order.map((o) => o.column).filter((c): c is VisitorColumn => c !== 'visitor_id'))];
  if (cut) ctes.push(...leadingVisitors(plan, cut, keys ? ranked : null));
  else {
    ctes.push(sql`visitors AS (
    SELECT ${join([trusted('visitor_id'), ...sortKeys.map((c) => sql`${rankAggregate(plan, c, dialect)} AS ${trusted(c)}`)])}
    FROM ranked_rows
    GROUP BY visitor_id${having.length ? sql`\n    HAVING ${join(having, ' AND ')}` : sql``})`);
  }

  if (mode === 'count') return print(sql`WITH ${join(ctes, ',\n')}\nSELECT count(*) AS total FROM visitors`);

  // The page's sort keys travel as rank_<key>, apart from the details' aggregates of the same name.
  const rank = (c: string) => (c === 'visitor_id' ? c : `rank_${c}`);
  const orderBy = (prefix: string) =>
    join(
      plan.order.map((o) =>
        trusted(`${prefix}${rank(o.column)} ${o.direction.toUpperCase()}${o.nullsLast ? ' NULLS LAST' : ''}`),
      ),
    );
  const listedColumns = ['visitor_id', ...sortKeys.map(rank), 'total'];
  ctes.push(sql`listed AS (
    SELECT ${join([
      trusted('visitor_id'),
      ...sortKeys.map((c) => trusted(`${c} AS ${rank(c)}`)),
      cut ? sql`(SELECT total FROM visitor_total) AS total` : sql`count(*) OVER () AS total`,
      ...(keys ? [trusted('visitor_key')] : []),
    ])}
    FROM visitors
    ORDER BY ${orderBy('')}
    OFFSET ${integer(plan.page.offset)} LIMIT ${integer(plan.page.limit + 1)})`);
  if (mode === 'listed') {
    // The pieces of the page's visitors name their partitions; rows read in the first pass tell no more than the range.
    // With keys they are found by key; a piece without one (a file the keying pass has not reached) may be anyone's,
    // so its partition is named too, and a listed visitor whose key is unknown (every piece it was ranked by lacks
    // one) names no partitions: the details then read the whole range.
    const named = (listedPieces: Sql) =>
      sql`(SELECT string_agg(DISTINCT CAST(dt AS VARCHAR), ',') FROM ranked_rows WHERE ${listedPieces})`;
    const days =
      plan.ranking.from !== 'visitor-days'
        ? sql`NULL`
        : keys
          ? sql`CASE WHEN EXISTS (SELECT 1 FROM listed WHERE visitor_key IS NULL) THEN NULL ELSE ${named(sql`visitor_key IN (SELECT visitor_key FROM listed) OR visitor_key IS NULL`)} END`
          : named(sql`visitor_id IN (SELECT visitor_id FROM listed)`);
    return print(sql`WITH ${join(ctes, ',\n')}
SELECT ${join([...listedColumns.map((c) => trusted(c)), sql`${days} AS listed_days`])}
FROM listed
ORDER BY ${orderBy('')}`);
  }

  // Joined rather than `IN (SELECT ... FROM listed)`: `listed` is read once, so Trino (which plans every
  // reference of a CTE on its own) does not run the first pass twice.
  const listedKeys = listedColumns.map((c) => trusted(`l.${c}`));
  ctes.push(
    plan.details.from === 'visitor-days'
      ? combinedDetailsCte(
          dialect,
          listedKeys,
          sql`listed l JOIN (${visitorPieces(target, plan.scope, plan.details.partitions, { columns: detailPieceColumns })}) base ON base.visitor_id = l.visitor_id`,
        )
      : detailsCte(
          plan,
          dialect,
          listedKeys,
          sql`listed l JOIN (${scopedEvents(target, plan.scope, plan.columns)}) base ON base.visitor_id = l.visitor_id`,
          listedKeys,
        ),
  );
  return print(sql`WITH ${join(ctes, ',\n')}
SELECT ${join([...detailsOutput(plan, dialect), trusted('total')])}
FROM details
ORDER BY ${orderBy('')}`);
}

/** `details`: per visitor, every aggregate and first-pageview attribute over its rows of `from`, with `keys`. */
function detailsCte(plan: VisitorListPlan, dialect: Dialect, keys: Sql[], from: Sql, groupBy: Sql[]): Sql {
  return sql`details AS (
    SELECT ${join([...keys, ...Object.entries(aggregates(dialect)).map(([name, value]) => sql`${value} AS ${trusted(name)}`), ...listedAttributes(dialect)])}
    FROM ${from}
    GROUP BY ${join(groupBy)})`;
}

/** A visitor's fields as the list shows them, timestamps in the request's zone. */
function detailsOutput(plan: VisitorListPlan, dialect: Dialect): Sql[] {
  const shown = (column: string) => dialect.formatTimestamp(localTime(trusted(column), plan.segments));
  return [
    ...[
      'visitor_id',
      'country',
      'browser',
      'os',
      'device',
      'pageview_count',
      'session_count',
      'event_count',
      'total_revenue_cents',
    ].map((c) => trusted(c)),
    sql`${shown('first_ts')} AS first_seen`,
    sql`${shown('last_ts')} AS last_seen`,
    trusted('first_referrer'),
    trusted('entry_page'),
    sql`${shown('latest_revenue_ts')} AS latest_revenue_date`,
    trusted('revenue_event_count'),
  ];
}
