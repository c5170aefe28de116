import { sessionAttributeColumns, sessionFragmentColumns } from '../../events/event-columns.js';
import type { Dialect } from '../sql/dialect.js';
import type { SqlTarget } from '../sql/target.js';
import { scopeCondition, type EventScope } from '../scope/event-scope.js';
import { bool, date, join, sql, str, trusted, type Sql } from '../sql/sql.js';

// Session fragments (docs/STORAGE.md): how they are made from event rows, which partitions of a range they
// may stand in for, and the pieces a query combines per session. Everything that knows the fragment columns'
// meaning is here, so the importer, the backfill and the query printer cannot drift apart.

const pageview = sql`type = 'pageview'`;

/**
 * `SELECT` of the fragments of `rows` (a relation of event rows): one row per (session_id, is_dev), unordered (the
 * writer orders them by `fragmentFileOrder`, after marking them if it marks). DuckDB only: the importer and the
 * backfill write fragments locally, Athena only reads them.
 */
export function fragmentsOf(rows: Sql, dialect: Dialect): Sql {
  // The attributes of the fragment's first row are taken as one struct: one aggregate state instead of one per
  // column, and all from the same row.
  const firstRow = sql`{${join(sessionAttributeColumns.map((c) => trusted(`'${c}': ${c}`)))}}`;
  const grouped = sql`SELECT ${join([
    trusted('session_id'),
    trusted('is_dev'),
    sql`min(visitor_id) AS visitor_id`,
    sql`min(ts) AS first_ts`,
    sql`max(ts) AS last_ts`,
    sql`count(*) FILTER (WHERE ${pageview}) AS pageviews`,
    sql`min(ts) FILTER (WHERE ${pageview}) AS first_pageview_ts`,
    sql`${dialect.argMinKeepNull(trusted('url_path'), trusted('ts'))} FILTER (WHERE ${pageview}) AS entry_page`,
    sql`${dialect.argMinKeepNull(firstRow, trusted('ts'))} AS first_row`,
    // Sorted only so that a file's bytes depend on its rows alone.
    sql`list(DISTINCT url_path ORDER BY url_path) AS url_paths`,
  ])}
FROM ${rows} WHERE session_id <> '' GROUP BY session_id, is_dev`;
  return sql`SELECT ${join([
    trusted('session_id, is_dev, visitor_id, first_ts, last_ts, pageviews, first_pageview_ts, entry_page'),
    ...sessionAttributeColumns.map((c) => trusted(`first_row.${c} AS ${c}`)),
    trusted('url_paths'),
    // Not whole: a local import marks its own (writer/derived-writer.ts), markWholeFragments
    // (local/store/whole-fragments.ts) corrects the marks over the store, S3's upkeep marks what it rewrites.
    sql`false AS whole`,
  ])}
FROM (${grouped})`;
}

/**
 * The order of the rows in a fragment file, given once by its writer: the fragments not marked whole first, then
 * the whole ones, each by first time. The queries read the two apart (`whole` and its negation): in a file of
 * several row groups the unmarked ones (under one in a hundred) lie in the first group, and their scan skips the
 * other groups by their statistics. `whole` is the written column (the select list's), not the one read.
 */
export const fragmentFileOrder = 'whole NULLS FIRST, first_ts';

/** The dt partitions lying wholly inside a range `[from, to)` (its full days in UTC), with the instants they cover. */
export interface FullPartitions {
  dtFrom: string;
  dtTo: string;
  /** Start of dtFrom and end of dtTo (UTC midnights): rows outside this span come from partial partitions. */
  from: Date;
  to: Date;
}

const DAY_MS = 86_400_000;

/** The full partitions of a range; null when it holds none. */
export function fullPartitions(range: { from: Date; to: Date }): FullPartitions | null {
  const from = new Date(Math.ceil(range.from.getTime() / DAY_MS) * DAY_MS);
  const to = new Date(Math.floor(range.to.getTime() / DAY_MS) * DAY_MS);
  if (from >= to) return null;
  const day = (d: Date) => d.toISOString().slice(0, 10);
  return { dtFrom: day(from), dtTo: day(new Date(to.getTime() - DAY_MS)), from, to };
}

/**
 * How a session source reads the fragments marked whole (docs/STORAGE.md). `exact`: each is a session by itself.
 * `stale`: a marked fragment may have gained unmarked fragments of its session since it was marked (the catalog's
 * wholeMarksExact is false: an S3 store), so the marked fragments with such a session are merged with them.
 * `ignored`: every fragment is merged per session, marked or not; where marks may be stale, one read of the
 * fragments instead of the five that finding the stale marks takes (Trino reads a relation again at each reference).
 */
export type FragmentMarks = 'exact' | 'stale' | 'ignored';

/** The fragment columns a session aggregate needs, beyond the times and pageviews every one needs. */
export type FragmentAttribute = 'entry_page' | (typeof sessionAttributeColumns)[number];

/**
 * The session pieces of a range: `whole` are the stored fragments marked whole (each a session by itself, never
 * merged); `merged` are the other stored fragments of the range's full partitions, plus every row of the
 * partial partitions at its ends as a one-row fragment (a stored fragment of a partial partition would hold rows
 * outside the range), to be merged per session. Each reads what it needs itself, so neither engine holds a
 * shared intermediate.
 *
 * With marks `stale` (the S3 store: StoreCatalog.wholeMarksExact), a marked fragment whose session has an unmarked
 * fragment in any partition the range touches is merged with the other pieces instead: its mark predates that
 * fragment. A session never has two marked fragments, and every piece of the partial partitions comes from a
 * fragment there, so this finds every session whose mark no longer holds within the range. With marks `ignored`,
 * `whole` is null and every stored fragment is a merged piece (with `byPaths`, only where every fragment has paths).
 *
 * With `byPaths`, `whole` (marks `exact` or `stale`) keeps only the fragments whose path list `byPaths.match` (a
 * predicate on `url_paths`) accepts. Then either `byPaths.unlisted`: `unlisted` holds the whole fragments without
 * paths, which the caller must pick by their sessions' rows like the merged pieces; or every fragment has paths, and
 * each merged piece carries `on_path`, whether it holds a path that passes (`byPaths.rowMatch` for a row of a partial
 * partition, a predicate on `url_path`): a session's pieces together hold all its rows of the range, so the caller
 * keeps the sessions with one such piece.
 */
export function sessionPieces(
  { catalog }: SqlTarget,
  scope: EventScope & { range: NonNullable<EventScope['range']> },
  { partitions, marks }: { partitions: FullPartitions; marks: FragmentMarks },
  attributes: FragmentAttribute[],
  byPaths: { match: Sql; rowMatch: Sql; unlisted: boolean } | null = null,
): { whole: Sql | null; unlisted: Sql | null; merged: Sql } {
  if (marks === 'ignored' && byPaths?.unlisted) throw new Error('fragments without paths are picked by their marks');
  const staleMarks = marks === 'stale';
  const columns = [
    'session_id',
    'visitor_id',
    'first_ts',
    'last_ts',
    'pageviews',
    ...(attributes.includes('entry_page') ? ['first_pageview_ts'] : []),
    ...attributes,
  ];
  const { range } = scope;
  const fragments = (
    dtFrom: string,
    dtTo: string,
    condition: Sql | null,
    table = catalog.tables.sessionFragments,
  ) => sql`FROM ${table}
    WHERE domain = ${str(scope.domain)} AND dt BETWEEN ${date(dtFrom)} AND ${date(dtTo)} AND is_dev = ${bool(scope.isDev)}${condition ? sql` AND ${condition}` : sql``}`;
  // One column list for every side: UNION ALL pairs columns by position, not by name.
  const onPath = byPaths && !byPaths.unlisted ? byPaths : null;
  const stored = (condition: Sql | null, onPathColumn = false, table = catalog.tables.sessionFragments) =>
    sql`SELECT ${join([...columns.map((c) => trusted(c)), ...(onPathColumn && onPath ? [sql`${onPath.match} AS on_path`] : [])])} ${fragments(partitions.dtFrom, partitions.dtTo, condition, table)}`;
  const extended = sql`SELECT session_id ${fragments(range.dtFrom, range.dtTo, notWhole)}`;
  const marked = staleMarks ? sql`whole AND session_id NOT IN (${extended})` : sql`whole`;
  const fromRows = [
    ...columns.map((c) => rowAsFragment[c] ?? trusted(c)),
    ...(onPath ? [sql`${onPath.rowMatch} AS on_path`] : []),
  ];
  const partial = range.from < partitions.from || range.to > partitions.to;
  // Fragments written before `whole` existed read NULL there: merged like any piece.
  // Where the store keeps its unmarked fragments apart, they are read there (the same rows, a fraction of the bytes).
  const unmarkedTable = catalog.unmarkedFragments ?? catalog.tables.sessionFragments;
  const unmarked =
    marks === 'ignored'
      ? stored(null, true)
      : staleMarks
        ? sql`${stored(notWhole, true)}
    UNION ALL
    ${stored(sql`whole AND session_id IN (${extended})`, true)}`
        : stored(notWhole, true, unmarkedTable);
  return {
    whole: marks === 'ignored' ? null : stored(byPaths ? sql`${marked} AND ${byPaths.match}` : marked),
    unlisted: byPaths?.unlisted ? stored(sql`${marked} AND url_paths IS NULL`) : null,
    // The partial partitions' rows are read from those partitions only (none when the range is whole days in UTC).
    merged: partial
      ? sql`${unmarked}
    UNION ALL
    SELECT ${join(fromRows)} FROM ${catalog.tables.events}
    WHERE ${scopeCondition(scope)} AND session_id <> '' AND (dt < ${date(partitions.dtFrom)} OR dt > ${date(partitions.dtTo)})`
      : unmarked,
  };
}

// Not `NOT coalesce(whole, false)`: DuckDB pushes comparisons and IS NULL into the Parquet scan and reads the other
// columns only for the few matching rows.
const notWhole = sql`(whole = false OR whole IS NULL)`;

/** `SELECT` of the fragments of `fragments` (a relation of fragment rows) not marked whole, every stored column. */
export function unmarkedFragmentsOf(fragments: Sql, extra: readonly string[] = []): Sql {
  return sql`SELECT ${join([...sessionFragmentColumns.map(([c]) => trusted(c)), ...extra.map((c) => trusted(c))])} FROM ${fragments} WHERE ${notWhole}`;
}

/** A fragment column computed from one event row (the other columns are the row's own). */
const rowAsFragment: Record<string, Sql> = {
  first_ts: sql`ts AS first_ts`,
  last_ts: sql`ts AS last_ts`,
  pageviews: sql`CAST(CASE WHEN ${pageview} THEN 1 ELSE 0 END AS BIGINT) AS pageviews`,
  first_pageview_ts: sql`CASE WHEN ${pageview} THEN ts END AS first_pageview_ts`,
  entry_page: sql`CASE WHEN ${pageview} THEN url_path END AS entry_page`,
};

/** A session's first value of a fragment attribute, combined over its pieces. */
export function combinedAttribute(dialect: Dialect, attribute: FragmentAttribute): Sql {
  if (attribute === 'entry_page') {
    return sql`${dialect.argMinKeepNull(trusted('entry_page'), trusted('first_pageview_ts'))} FILTER (WHERE first_pageview_ts IS NOT NULL)`;
  }
  return dialect.argMinKeepNull(trusted(attribute), trusted('first_ts'));
}
