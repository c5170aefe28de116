import type { OffsetSegment } from '../time/time-zone.js';
import type { Dialect } from './dialect.js';
import { bool, date, integer, join, sql, str, timestamp, trusted, type Sql } from './sql.js';

// The rows a query may read: one domain, the `dt` partitions of its range (pruning), the exact instants of the
// range, and dev or non-dev rows (never both). Every query of every endpoint starts from this.

export interface EventScope {
  domain: string;
  isDev: boolean;
  /** Absent for all-time reads (journeys stats and activity). */
  range?: { from: Date; to: Date; dtFrom: string; dtTo: string };
  visitorId?: string;
}

export function scopeCondition(scope: EventScope): Sql {
  const conditions: Sql[] = [sql`domain = ${str(scope.domain)}`];
  if (scope.range) {
    const { dtFrom, dtTo, from, to } = scope.range;
    conditions.push(sql`dt BETWEEN ${date(dtFrom)} AND ${date(dtTo)}`, sql`ts >= ${timestamp(from)}`, sql`ts < ${timestamp(to)}`);
  }
  if (scope.visitorId !== undefined) conditions.push(sql`visitor_id = ${str(scope.visitorId)}`);
  conditions.push(sql`is_dev = ${bool(scope.isDev)}`);
  return join(conditions, ' AND ');
}

/** `SELECT <columns> FROM events WHERE <scope>`, with `local_ts` appended when segments are given. */
export function scopedEvents(dialect: Dialect, scope: EventScope, columns: Iterable<string>, segments?: OffsetSegment[]): Sql {
  const selected = [...new Set(columns)].sort().map((c) => trusted(c));
  if (segments) selected.push(sql`${localTime(trusted('ts'), segments)} AS local_ts`);
  return sql`SELECT ${join(selected)} FROM ${dialect.eventsTable} WHERE ${scopeCondition(scope)}`;
}

/**
 * Wall-clock time in the request's zone by plain arithmetic: the range's offsets were computed once in
 * JavaScript, so no row pays for a zone conversion and both engines agree to the second.
 */
export function localTime(ts: Sql, segments: OffsetSegment[]): Sql {
  const offset =
    segments.length === 1
      ? integer(segments[0]!.offsetSeconds)
      : sql`CASE ${join(
          segments.map((s) => (s.until ? sql`WHEN ${ts} < ${timestamp(s.until)} THEN ${integer(s.offsetSeconds)}` : sql`ELSE ${integer(s.offsetSeconds)}`)),
          ' ',
        )} END`;
  return sql`(${ts} + ${offset} * INTERVAL '1' SECOND)`;
}
