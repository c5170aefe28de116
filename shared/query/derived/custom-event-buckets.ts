import type { SqlTarget } from '../sql/target.js';
import type { EventScope } from '../scope/event-scope.js';
import { visitorFilterRows } from '../scope/filters.js';
import { bucketScope } from './pageview-buckets.js';
import { join, sql, trusted, type Sql } from '../sql/sql.js';

// Custom-event buckets (docs/STORAGE.md): per (15-minute UTC bucket, visitor) of one event file, each distinct
// custom event and exit link, with its name and properties. A visitor filter (`event`, `event_property`,
// `exit_link`) and the event dimension ask which visitors had such a row in the range: these answer it exactly
// wherever the pageview buckets do (the range on bucket edges), from a small relation instead of the event files,
// and locally with each visitor's key. Everything that knows their meaning is here.

/**
 * `SELECT` of the custom-event buckets of `rows` (a relation of event rows), unordered: the writer orders them by
 * visitor and bucket after joining keys if it has them. DuckDB only: the writers write them, Athena reads them.
 */
export function customEventBucketsOf(rows: Sql): Sql {
  return sql`SELECT time_bucket(INTERVAL '15 minutes', ts) AS bucket, is_dev, visitor_id, CAST(NULL AS BIGINT) AS visitor_key, type, event_name, event_properties
FROM ${rows} WHERE ${visitorFilterRows} GROUP BY ALL`;
}

/**
 * The custom-event buckets of a scope's range with `columns` (a visitor column and the columns a predicate
 * reads). Exact only where the range lies on bucket edges (pageview-buckets.ts, areBucketsAligned): the sources decide.
 */
export function scopedCustomEventBuckets(
  { catalog }: SqlTarget,
  scope: EventScope & { range: NonNullable<EventScope['range']> },
  columns: Iterable<string>,
): Sql {
  const selected = [...new Set(columns)].sort().map((c) => trusted(c));
  return sql`SELECT ${join(selected)} FROM ${catalog.tables.customEventBuckets}
    WHERE ${bucketScope(scope)}`;
}
