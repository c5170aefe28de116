import { pageBucketColumns, pageviewBucketColumns, sessionCountColumns, sessionFragmentColumns, visitorDayColumns } from './event-columns.js';

// The relations derived from each event file at import and stored beside it, in the same `domain=/dt=` layout
// under the same file name (docs/STORAGE.md): the folder (locally under the data dir, on S3 beside the events
// prefix), the table (the DuckDB view, the Glue table) and the stored columns. One list for every place that
// writes, reads or declares them.

export const SESSION_FRAGMENTS_TABLE = 'session_fragments';
export const PAGEVIEW_BUCKETS_TABLE = 'pageview_buckets';
export const PAGE_BUCKETS_TABLE = 'page_buckets';
export const VISITOR_DAYS_TABLE = 'visitor_days';

export const derivedRelations = [
  { folder: 'sessions', table: SESSION_FRAGMENTS_TABLE, columns: sessionFragmentColumns },
  { folder: 'pageviews', table: PAGEVIEW_BUCKETS_TABLE, columns: pageviewBucketColumns },
  { folder: 'pages', table: PAGE_BUCKETS_TABLE, columns: pageBucketColumns },
  { folder: 'visitors', table: VISITOR_DAYS_TABLE, columns: visitorDayColumns },
] as const;

export type DerivedFolder = (typeof derivedRelations)[number]['folder'];

export const SESSION_COUNTS_TABLE = 'session_counts';

/**
 * The session counts (docs/STORAGE.md, "Session counts"): derived from the local store's fragment files after their
 * whole marks, one file per fragment file, by every store transaction before it publishes (local/store/
 * session-counts.ts). Local only: S3's whole marks may be stale, so Athena reads the fragments.
 */
export const sessionCountsRelation = { folder: 'session_counts', table: SESSION_COUNTS_TABLE, columns: sessionCountColumns } as const;
