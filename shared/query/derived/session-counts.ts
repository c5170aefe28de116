import { sessionAttributeColumns } from '../../events/event-columns.js';
import type { OffsetSegment } from '../../time/time-zone.js';
import type { SqlTarget } from '../sql/target.js';
import { localSeconds, type EventScope } from '../scope/event-scope.js';
import { bool, date, join, sql, str, trusted, type Sql } from '../sql/sql.js';
import type { FragmentAttribute, FullPartitions } from './session-fragments.js';

// Session counts (docs/STORAGE.md, "Session counts"): the whole session fragments of a fragment file counted per
// 15-minute UTC bucket of their first time, and per value of each fragment attribute (the entry page and the
// first row's attribution). A whole fragment is a session by itself, so a query whose session metrics are grouped
// by time alone, by one attribute alone, or not at all reads these counts for the whole fragments instead of a row
// per session, and still merges the other pieces as before. Every zone offset since 1970 is a multiple of 15
// minutes, so a session's local date and hour are those of its bucket wherever the pageview buckets align.

/** The fragment attributes counted by: every session dimension but time. */
export const countedAttributes: readonly FragmentAttribute[] = ['entry_page', ...sessionAttributeColumns];

/**
 * `SELECT` of the counts of `fragments` (a relation of fragment rows with their `whole` marks), one row per
 * (`keys`..., is_dev, bucket) and per (`keys`..., is_dev, attribute, value). DuckDB only. The local store writes
 * them by `filename` (a file each) as `grouping-sets`: one pass over the fragments. The local engine's view computes
 * them over the fragments by `domain` and `dt` for a snapshot that predates them, as `branches`: a branch per
 * attribute, so a query's condition on `attribute` leaves one branch to compute.
 */
export function sessionCountsOf(
  fragments: Sql,
  keys: readonly ('domain' | 'dt' | 'filename')[],
  form: 'grouping-sets' | 'branches',
): Sql {
  const key = keys.map((k) => trusted(k));
  const aggregates = [
    sql`count(*) AS sessions`,
    sql`count(*) FILTER (WHERE pageviews = 1) AS bounces`,
    sql`CAST(sum(duration_ms) AS BIGINT) AS duration_ms`,
  ];
  const whole = sql`(SELECT ${join([
    ...key,
    trusted('is_dev'),
    sql`time_bucket(INTERVAL '15 minutes', first_ts) AS bucket`,
    ...countedAttributes.map((a) => trusted(a)),
    trusted('pageviews'),
    sql`date_diff('millisecond', first_ts, last_ts) AS duration_ms`,
  ])} FROM ${fragments} WHERE whole) whole_fragments`;
  if (form === 'branches') {
    const branch = (bucket: Sql, attribute: string | null) =>
      sql`SELECT ${join([
        ...key,
        trusted('is_dev'),
        sql`${bucket} AS bucket`,
        attribute ? sql`${trusted(`'${attribute}'`)} AS attribute` : sql`CAST(NULL AS VARCHAR) AS attribute`,
        attribute ? sql`${trusted(attribute)} AS value` : sql`CAST(NULL AS VARCHAR) AS value`,
        ...aggregates,
      ])} FROM ${whole} GROUP BY ${join([...key, trusted('is_dev'), attribute ? trusted(attribute) : trusted('bucket')])}`;
    return join(
      [branch(trusted('bucket'), null), ...countedAttributes.map((a) => branch(sql`CAST(NULL AS TIMESTAMP)`, a))],
      '\nUNION ALL\n',
    );
  }
  const sets = [
    sql`(${join([...key, trusted('is_dev'), trusted('bucket')])})`,
    ...countedAttributes.map((a) => sql`(${join([...key, trusted('is_dev'), trusted(a)])})`),
  ];
  // Which set a row belongs to: the attribute whose column it is grouped by (GROUPING is 0 for a grouped column).
  const attribute = sql`CASE ${join(
    countedAttributes.map((a) => trusted(`WHEN GROUPING(${a}) = 0 THEN '${a}'`)),
    ' ',
  )} END`;
  const value = sql`CASE ${join(
    countedAttributes.map((a) => trusted(`WHEN GROUPING(${a}) = 0 THEN ${a}`)),
    ' ',
  )} END`;
  return sql`SELECT ${join([...key, trusted('is_dev'), trusted('bucket'), sql`${attribute} AS attribute`, sql`${value} AS value`, ...aggregates])}
FROM ${whole}
GROUP BY GROUPING SETS (${join(sets)})`;
}

/**
 * The counts of the whole fragments of a range's full partitions: by time, with `local_s` (localSeconds of the
 * bucket) when segments are given, or by `attribute`'s `value`. The stand-in for those fragments' sessions in
 * session metrics by time, by that attribute, or by nothing.
 */
export function scopedSessionCounts(
  { dialect, catalog }: SqlTarget,
  scope: EventScope,
  partitions: FullPartitions,
  by: { segments: OffsetSegment[] | undefined } | { attribute: FragmentAttribute },
): Sql {
  if (!catalog.sessionCounts) throw new Error('this store keeps no session counts');
  const selected = [trusted('sessions'), trusted('bounces'), trusted('duration_ms')];
  if ('attribute' in by) selected.push(trusted('value'));
  else if (by.segments) selected.push(sql`${localSeconds(dialect, trusted('bucket'), by.segments)} AS local_s`);
  const rows = 'attribute' in by ? sql`attribute = ${str(by.attribute)}` : sql`attribute IS NULL`;
  return sql`SELECT ${join(selected)} FROM ${catalog.sessionCounts}
    WHERE domain = ${str(scope.domain)} AND dt BETWEEN ${date(partitions.dtFrom)} AND ${date(partitions.dtTo)} AND is_dev = ${bool(scope.isDev)} AND ${rows}`;
}
