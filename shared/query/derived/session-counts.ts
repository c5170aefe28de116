import type { OffsetSegment } from '../../time/time-zone.js';
import type { SqlTarget } from '../sql/target.js';
import { localSeconds, type EventScope } from '../scope/event-scope.js';
import { bool, date, join, sql, str, trusted, type Sql } from '../sql/sql.js';
import type { FullPartitions } from './session-fragments.js';

// Session counts (docs/STORAGE.md, "Session counts"): the whole session fragments of a fragment file counted per
// (is_dev, 15-minute UTC bucket of their first time). A whole fragment is a session by itself, so a query whose
// session metrics are grouped by time alone (or not at all) reads these counts for the whole fragments instead of
// a row per session, and still merges the other pieces as before. Every zone offset since 1970 is a multiple of
// 15 minutes, so a session's local date and hour are those of its bucket wherever the pageview buckets align.

/**
 * `SELECT` of the counts of `fragments` (a relation of fragment rows with their `whole` marks), one row per
 * (`keys`..., is_dev, bucket). DuckDB only: the local store writes them (by `filename`, a file each), and the
 * local engine's view computes them over the fragments (by `domain` and `dt`) for a store whose snapshot predates
 * them.
 */
export function sessionCountsOf(fragments: Sql, keys: readonly ('domain' | 'dt' | 'filename')[] = []): Sql {
  return sql`SELECT ${join([
    ...keys.map((k) => trusted(k)),
    trusted('is_dev'),
    sql`time_bucket(INTERVAL '15 minutes', first_ts) AS bucket`,
    sql`count(*) AS sessions`,
    sql`count(*) FILTER (WHERE pageviews = 1) AS bounces`,
    sql`CAST(sum(date_diff('millisecond', first_ts, last_ts)) AS BIGINT) AS duration_ms`,
  ])}
FROM ${fragments} WHERE whole GROUP BY ALL`;
}

/**
 * The counts of the whole fragments of a range's full partitions, with `local_s` (localSeconds of the bucket) when
 * segments are given: the stand-in for those fragments' sessions in session metrics by time or by nothing.
 */
export function scopedSessionCounts(
  { dialect, catalog }: SqlTarget,
  scope: EventScope,
  partitions: FullPartitions,
  segments: OffsetSegment[] | undefined,
): Sql {
  if (!catalog.sessionCounts) throw new Error('this store keeps no session counts');
  const selected = [trusted('sessions'), trusted('bounces'), trusted('duration_ms')];
  if (segments) selected.push(sql`${localSeconds(dialect, trusted('bucket'), segments)} AS local_s`);
  return sql`SELECT ${join(selected)} FROM ${catalog.sessionCounts}
    WHERE domain = ${str(scope.domain)} AND dt BETWEEN ${date(partitions.dtFrom)} AND ${date(partitions.dtTo)} AND is_dev = ${bool(scope.isDev)}`;
}
