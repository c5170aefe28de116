// The stored columns of an event row (docs/EVENT-FORMAT.md, "Storage layout"), in file order. One list serves the Parquet writer,
// the DuckDB view over the files and the Glue table. `domain` and `dt` are partition columns, not in the files.

export type ColumnType = 'timestamp' | 'string' | 'double' | 'bigint' | 'boolean' | 'string_list';

export const eventColumns = [
  ['ts', 'timestamp'],
  ['type', 'string'],
  ['visitor_id', 'string'],
  ['session_id', 'string'],
  ['url_path', 'string'],
  ['referrer', 'string'],
  ['referrer_domain', 'string'],
  ['utm_source', 'string'],
  ['utm_medium', 'string'],
  ['utm_campaign', 'string'],
  ['utm_content', 'string'],
  ['utm_term', 'string'],
  ['country', 'string'],
  ['region', 'string'],
  ['city', 'string'],
  ['browser', 'string'],
  ['os', 'string'],
  ['device', 'string'],
  ['scroll_depth', 'double'],
  ['event_name', 'string'],
  ['event_properties', 'string'],
  ['transaction_id', 'string'],
  ['amount_cents', 'bigint'],
  ['currency', 'string'],
  ['revenue_event', 'string'],
  ['is_dev', 'boolean'],
] as const satisfies readonly (readonly [string, ColumnType])[];

export type EventColumn = (typeof eventColumns)[number][0];

export const partitionColumns = [
  ['domain', 'string'],
  ['dt', 'date'],
] as const;

export const duckdbTypes: Record<ColumnType | 'date', string> = {
  timestamp: 'TIMESTAMP',
  string: 'VARCHAR',
  double: 'DOUBLE',
  bigint: 'BIGINT',
  boolean: 'BOOLEAN',
  string_list: 'VARCHAR[]',
  date: 'DATE',
};

/** The event columns a fragment carries as its first row's value (the session dimensions other than page). */
export const sessionAttributeColumns = [
  'referrer_domain',
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_term',
  'country',
  'region',
  'city',
  'browser',
  'os',
  'device',
] as const;

/**
 * The stored columns of a session fragment: one row per (session_id, is_dev) of one event file, written next to
 * it at import (docs/STORAGE.md). `*_ts` and the attribution columns are the fragment's first row's (or first
 * pageview's) values, so fragments of one session combine exactly: min/max of the times, sum of the pageviews,
 * the values of the fragment with the earliest time. One list serves the writer, the DuckDB view and Glue.
 */
export const sessionFragmentColumns = [
  ['session_id', 'string'],
  ['is_dev', 'boolean'],
  ['visitor_id', 'string'],
  ['first_ts', 'timestamp'],
  ['last_ts', 'timestamp'],
  ['pageviews', 'bigint'],
  ['first_pageview_ts', 'timestamp'],
  ['entry_page', 'string'],
  ...sessionAttributeColumns.map((c) => [c, 'string'] as const),
  /** The distinct `url_path` of the fragment's rows (NULL among them when one has none): page filters test them. */
  ['url_paths', 'string_list'],
  /** The session's only fragment in the store: a session by itself, read without merging (docs/STORAGE.md). */
  ['whole', 'boolean'],
] as const satisfies readonly (readonly [string, ColumnType])[];

/**
 * The stored columns of the pageview buckets (docs/STORAGE.md): one row per (15-minute UTC bucket, is_dev,
 * visitor, attribution values) of the pageviews of one event file, with their count. Every zone offset in use
 * since 1970 is a multiple of 15 minutes, so any zone's dates and hours are unions of whole buckets.
 */
export const pageviewBucketColumns = [
  ...bucketKey(),
  ...sessionAttributeColumns.map((c) => [c, 'string'] as const),
  ['pageviews', 'bigint'],
] as const satisfies readonly (readonly [string, ColumnType])[];

/**
 * The stored columns of the page buckets (docs/STORAGE.md): the pageview buckets' time and visitor, by page
 * (`url_path`) instead of attribution. A separate relation, since pages split the attribution buckets' rows.
 */
export const pageBucketColumns = [
  ...bucketKey(),
  ['url_path', 'string'],
  /** The pageviews' referrer domain: pages by referrer, and a page's referrers, answered from these too. */
  ['referrer_domain', 'string'],
  ['pageviews', 'bigint'],
] as const satisfies readonly (readonly [string, ColumnType])[];

/**
 * The stored columns of the custom-event buckets (docs/STORAGE.md): the pageview buckets' time and visitor with each
 * distinct custom event (`type` 'event') and exit link (`type` 'auto', `event_name` 'exit_link') of the bucket's
 * visitor in one event file: the rows a visitor filter or the event dimension tests, without the rest of the row.
 */
export const customEventBucketColumns = [
  ...bucketKey(),
  ['type', 'string'],
  ['event_name', 'string'],
  ['event_properties', 'string'],
] as const satisfies readonly (readonly [string, ColumnType])[];

/**
 * The stored columns of the visitor days (docs/STORAGE.md): one row per (is_dev, visitor) of one event file, with
 * the visitor's first and last row time, counts and revenue there, their first pageview and their sessions; they combine
 * by min, max, sum, the first pageview's values and the union of the sessions. Every visitor
 * of a file has a row here, so locally the visitor days also key the visitors the buckets never see (no pageview).
 */
export const visitorDayColumns = [
  ['is_dev', 'boolean'],
  ['visitor_id', 'string'],
  ['first_ts', 'timestamp'],
  ['last_ts', 'timestamp'],
  ['pageviews', 'bigint'],
  ['events', 'bigint'],
  ['revenue_cents', 'bigint'],
  ['revenue_events', 'bigint'],
  ['latest_revenue_ts', 'timestamp'],
  /**
   * The time of the visitor's first pageview in the file when it is later than `first_ts`; NULL when the first row
   * is a pageview (the common case, so the column costs almost nothing) or when there is no pageview.
   */
  ['first_pageview_ts', 'timestamp'],
  // The attributes of that first pageview (NULL without a pageview): what a journeys list shows per visitor.
  ['country', 'string'],
  ['browser', 'string'],
  ['os', 'string'],
  ['device', 'string'],
  ['referrer_domain', 'string'],
  ['entry_page', 'string'],
  /** The distinct non-empty `session_id` of the visitor's rows in the file, sorted: sessions counted across files. */
  ['session_ids', 'string_list'],
  /** The visitor's integer key, as in the buckets; NULL in files not keyed locally. */
  ['visitor_key', 'bigint'],
] as const satisfies readonly (readonly [string, ColumnType])[];

/**
 * The stored columns of the session counts (docs/STORAGE.md): the whole session fragments of one fragment file per
 * is_dev and either 15-minute UTC bucket of their first time (`attribute` NULL) or value of one fragment attribute
 * (`bucket` NULL): how many, how many with one pageview, their summed duration. Written by the local store only,
 * from its fragment files after marking.
 */
export const sessionCountColumns = [
  ['is_dev', 'boolean'],
  ['bucket', 'timestamp'],
  /** The fragment column counted by (`entry_page`, `referrer_domain`, `country`, ...), NULL on the rows by time. */
  ['attribute', 'string'],
  ['value', 'string'],
  ['sessions', 'bigint'],
  ['bounces', 'bigint'],
  ['duration_ms', 'bigint'],
] as const satisfies readonly (readonly [string, ColumnType])[];

/** The leading columns of every kind of bucket: their time and visitor. */
function bucketKey() {
  return [
    ['bucket', 'timestamp'],
    ['is_dev', 'boolean'],
    ['visitor_id', 'string'],
    /** The visitor's integer key in its domain's local store (local/store/visitor-keys.ts); NULL in files not keyed locally. */
    ['visitor_key', 'bigint'],
  ] as const;
}
