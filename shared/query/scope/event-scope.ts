import { addDays } from '../../time/date-range.js';
import type { OffsetSegment } from '../../time/time-zone.js';
import type { Dialect } from '../sql/dialect.js';
import type { SqlTarget } from '../sql/target.js';
import { bool, date, integer, join, sql, str, timestamp, trusted, type Sql } from '../sql/sql.js';

// The rows a query may read: one domain, the `dt` partitions of its range (pruning), the exact instants of the
// range, and dev or non-dev rows (never both). Every query of every endpoint starts from this.

export interface EventScope {
  domain: string;
  isDev: boolean;
  /** Absent for all-time reads (journeys stats and activity). */
  range?: { from: Date; to: Date; dtFrom: string; dtTo: string };
  /** For all-time reads: the domain's days (store/domain-days-repo.ts), the partitions that can hold its rows. */
  days?: { firstDay: string; lastDay: string };
  visitorId?: string;
}

/**
 * A range as conditions on a relation's rows: its `dt` partitions, and the bounds on `column` (the row's instant,
 * or its bucket) that fall inside a partition. Every row's `dt` is the UTC day of its instant, so a bound on a
 * partition's edge adds nothing to the `dt` bound, yet would cost every row a read and a test of `column`.
 */
export function rangeConditions(range: NonNullable<EventScope['range']>, column: 'ts' | 'bucket'): Sql[] {
  const { dtFrom, dtTo, from, to } = range;
  const conditions = [sql`dt BETWEEN ${date(dtFrom)} AND ${date(dtTo)}`];
  if (from.getTime() !== utcMidnight(dtFrom)) conditions.push(sql`${trusted(column)} >= ${timestamp(from)}`);
  if (to.getTime() !== utcMidnight(addDays(dtTo, 1))) conditions.push(sql`${trusted(column)} < ${timestamp(to)}`);
  return conditions;
}

const utcMidnight = (day: string): number => Date.parse(`${day}T00:00:00Z`);

export function scopeCondition(scope: EventScope): Sql {
  const conditions: Sql[] = [sql`domain = ${str(scope.domain)}`];
  if (scope.range) {
    conditions.push(...rangeConditions(scope.range, 'ts'));
  } else if (scope.days) {
    conditions.push(sql`dt BETWEEN ${date(scope.days.firstDay)} AND ${date(scope.days.lastDay)}`);
  }
  if (scope.visitorId !== undefined) conditions.push(sql`visitor_id = ${str(scope.visitorId)}`);
  conditions.push(sql`is_dev = ${bool(scope.isDev)}`);
  return join(conditions, ' AND ');
}

/**
 * `SELECT <columns> FROM events WHERE <scope>`, with the local time appended when segments are given: `local_ts`
 * (a timestamp, for display) or `local_s` (integer seconds, for grouping: see localSeconds).
 */
export function scopedEvents(
  target: SqlTarget,
  scope: EventScope,
  columns: Iterable<string>,
  segments?: OffsetSegment[],
  local: 'local_ts' | 'local_s' = 'local_ts',
): Sql {
  const selected = [...new Set(columns)].sort().map((c) => trusted(c));
  if (segments)
    selected.push(
      sql`${local === 'local_ts' ? localTime(trusted('ts'), segments) : localSeconds(target.dialect, trusted('ts'), segments)} AS ${trusted(local)}`,
    );
  return sql`SELECT ${join(selected)} FROM ${target.catalog.tables.events} WHERE ${scopeCondition(scope)}`;
}

/**
 * Wall-clock time in the request's zone by plain arithmetic: the range's offsets were computed once in
 * JavaScript, so no row pays for a zone conversion and both engines agree to the second.
 */
export function localTime(ts: Sql, segments: OffsetSegment[]): Sql {
  return sql`(${ts} + ${offsetAt(ts, segments)} * INTERVAL '1' SECOND)`;
}

/**
 * The same wall-clock time as integer seconds since 1970-01-01 00:00 local: grouping rows by date or hour is
 * then integer arithmetic, far cheaper per row than timestamp arithmetic and casts.
 */
export function localSeconds(dialect: Dialect, ts: Sql, segments: OffsetSegment[]): Sql {
  return sql`(${dialect.epochSeconds(ts)} + ${offsetAt(ts, segments)})`;
}

/** The zone's offset in seconds at `ts`: the segment it falls in. */
function offsetAt(ts: Sql, segments: OffsetSegment[]): Sql {
  if (segments.length === 1) return integer(segments[0]!.offsetSeconds);
  return sql`CASE ${join(
    segments.map((s) =>
      s.until
        ? sql`WHEN ${ts} < ${timestamp(s.until)} THEN ${integer(s.offsetSeconds)}`
        : sql`ELSE ${integer(s.offsetSeconds)}`,
    ),
    ' ',
  )} END`;
}
