import {
  customEventBucketColumns,
  pageBucketColumns,
  pageviewBucketColumns,
  sessionCountColumns,
  sessionFragmentColumns,
  visitorDayColumns,
} from './event-columns.js';

// The relations derived from each event file at import and stored beside it, in the same `domain=/dt=` layout
// under the same file name (docs/STORAGE.md): the folder (locally under the data dir, on S3 beside the events
// prefix), the table (the DuckDB view, the Glue table) and the stored columns. One list for every place that
// writes, reads or declares them.

export const SESSION_FRAGMENTS_TABLE = 'session_fragments';
export const PAGEVIEW_BUCKETS_TABLE = 'pageview_buckets';
export const PAGE_BUCKETS_TABLE = 'page_buckets';
export const VISITOR_DAYS_TABLE = 'visitor_days';
export const CUSTOM_EVENT_BUCKETS_TABLE = 'custom_event_buckets';

export const derivedRelations = [
  { folder: 'sessions', table: SESSION_FRAGMENTS_TABLE, columns: sessionFragmentColumns },
  { folder: 'pageviews', table: PAGEVIEW_BUCKETS_TABLE, columns: pageviewBucketColumns },
  { folder: 'pages', table: PAGE_BUCKETS_TABLE, columns: pageBucketColumns },
  { folder: 'visitors', table: VISITOR_DAYS_TABLE, columns: visitorDayColumns },
  { folder: 'custom_events', table: CUSTOM_EVENT_BUCKETS_TABLE, columns: customEventBucketColumns },
] as const;

export type DerivedFolder = (typeof derivedRelations)[number]['folder'];

export const SESSION_COUNTS_TABLE = 'session_counts';
export const UNMARKED_FRAGMENTS_TABLE = 'unmarked_fragments';

/**
 * Relations the local store derives from its fragment files as marked (docs/STORAGE.md, "Fragment twins"): a file
 * of each beside every fragment file, written by every store transaction before it publishes (local/store/
 * fragment-twins.ts). The session counts count its whole fragments per time bucket and attribute value; the
 * unmarked fragments are its fragments not marked whole, the only ones a query merges, in a file small enough to
 * read whole. Local only: S3's whole marks may be stale, so Athena reads the fragments.
 */
export const fragmentTwinRelations = [
  { folder: 'session_counts', table: SESSION_COUNTS_TABLE, columns: sessionCountColumns },
  { folder: 'unmarked_fragments', table: UNMARKED_FRAGMENTS_TABLE, columns: sessionFragmentColumns },
] as const;

export type FragmentTwinFolder = (typeof fragmentTwinRelations)[number]['folder'];
