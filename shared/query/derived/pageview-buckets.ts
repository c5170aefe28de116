import { sessionAttributeColumns } from '../../events/event-columns.js';
import type { OffsetSegment } from '../../time/time-zone.js';
import type { StoreCatalog } from '../sql/catalog.js';
import type { SqlTarget } from '../sql/target.js';
import type { EventScope } from '../scope/event-scope.js';
import { localSeconds, rangeConditions } from '../scope/event-scope.js';
import { bool, join, sql, str, trusted, type Sql } from '../sql/sql.js';

// Pageview buckets (docs/STORAGE.md): pageviews per (15-minute UTC bucket, visitor, attribution values) of one
// event file, written at import beside it. They answer `visitors` and `pageviews` by time and by any session
// attribution (referrer, UTM, geo, device) exactly, reading a fraction of the rows: a visitor's pageviews of one
// quarter hour with the same attribution are one row. Page buckets are the same by page (`url_path`) instead of
// attribution: a relation of their own, since pages would split the attribution buckets' rows. Everything that
// knows their meaning is here.

const BUCKET_MS = 15 * 60 * 1000;

/** The two bucket relations, by folder. */
export type BucketRelation = 'pageviews' | 'pages';

/**
 * The columns a bucket of each relation groups by besides its time and visitor: the dimensions it can answer, and
 * the columns a row filter can test on it (a filter on a grouped column keeps whole bucket rows).
 */
export const bucketGroups: Record<BucketRelation, readonly string[]> = {
  pageviews: sessionAttributeColumns,
  pages: ['url_path', 'referrer_domain'],
};

/**
 * The relation whose buckets group by every one of `columns` (the pageview buckets for none); null if neither.
 * Without `pageReferrers` (a store whose page buckets may lack the column: the catalog's pageBucketReferrers), the
 * page buckets answer by `url_path` only.
 */
export function bucketRelationFor(columns: string[], pageReferrers = true): BucketRelation | null {
  if (columns.every((c) => bucketGroups.pageviews.includes(c))) return 'pageviews';
  const pages = pageReferrers ? bucketGroups.pages : ['url_path'];
  if (columns.every((c) => pages.includes(c))) return 'pages';
  return null;
}

/**
 * `SELECT` of the buckets of `rows` (a relation of event rows), unordered: the writer orders them by
 * `bucketFileOrder` (writer/derived-writer.ts), after joining keys if it has them. DuckDB only: the importer
 * and the backfill write them, Athena reads them. Without visitor keys: a local import joins its own keys to it,
 * and keyVisitors (local/store/visitor-keys.ts) keys what other writers wrote, from the store's own keys.
 */
export function bucketsOf(rows: Sql, relation: BucketRelation): Sql {
  const keys = [
    sql`time_bucket(INTERVAL '15 minutes', ts) AS bucket`,
    trusted('is_dev'),
    trusted('visitor_id'),
    sql`CAST(NULL AS BIGINT) AS visitor_key`,
    ...bucketGroups[relation].map((c) => trusted(c)),
  ];
  return sql`SELECT ${join([...keys, sql`count(*) AS pageviews`])}
FROM ${rows} WHERE type = 'pageview' GROUP BY ALL`;
}

/** The order of the rows in a bucket file: by visitor, so a count of distinct visitors meets each one in runs. */
export const bucketFileOrder = 'visitor_id, bucket';

/**
 * The order of the rows in a page-bucket file: by page first, so counting a page's visitors (bitmaps of their keys,
 * which follow the ids) sets bits in that page's bitmaps only while it reads that page's rows, and a page filter's
 * rows lie together. The files take more bytes than in visitor order, whose runs of ids compress (docs/STORAGE.md).
 */
export const pageBucketFileOrder = 'url_path, visitor_id, bucket';

/**
 * Buckets are exact for a range when the range and every local-time boundary inside it fall on bucket edges:
 * then each bucket lies wholly inside or outside the range and wholly inside one local date or hour. True of
 * every zone since 1970 except a few odd historical offsets, which fall back to the event rows.
 */
export function areBucketsAligned(range: { from: Date; to: Date }, segments: OffsetSegment[] | undefined): boolean {
  const aligned = (ms: number) => ms % BUCKET_MS === 0;
  if (!aligned(range.from.getTime()) || !aligned(range.to.getTime())) return false;
  return (segments ?? []).every(
    (s) => aligned(s.offsetSeconds * 1000) && (s.until === null || aligned(s.until.getTime())),
  );
}

/**
 * The buckets of one relation over a scope's range, with the visitor columns asked for (`visitor_id`,
 * `visitor_key`), the attribute columns asked for and `local_s` (localSeconds) when segments are given.
 */
export function scopedBuckets(
  { dialect, catalog }: SqlTarget,
  relation: BucketRelation,
  scope: EventScope & { range: NonNullable<EventScope['range']> },
  visitorColumns: string[],
  attributes: string[],
  segments?: OffsetSegment[],
): Sql {
  const selected = [...new Set([...visitorColumns, 'pageviews', ...attributes])].map((c) => trusted(c));
  if (segments) selected.push(sql`${localSeconds(dialect, trusted('bucket'), segments)} AS local_s`);
  return sql`SELECT ${join(selected)} FROM ${bucketTable(catalog, relation)}
    WHERE ${bucketScope(scope)}`;
}

/** The rows of a relation keyed by 15-minute `bucket` that lie in a scope's domain, range and is_dev. */
export function bucketScope(scope: EventScope & { range: NonNullable<EventScope['range']> }): Sql {
  return join(
    [sql`domain = ${str(scope.domain)}`, ...rangeConditions(scope.range, 'bucket'), sql`is_dev = ${bool(scope.isDev)}`],
    ' AND ',
  );
}

export function bucketTable(catalog: StoreCatalog, relation: BucketRelation): Sql {
  return relation === 'pages' ? catalog.tables.pageBuckets : catalog.tables.pageviewBuckets;
}

/**
 * The store's shape for bitmaps (visitor-bitmaps.ts) over a domain's buckets: largest key, rows per day, and the
 * distinct values of `columns` (bucket columns of the relation, from bucketGrouping: never request text).
 */
export function printStoreShape(
  domain: string,
  relation: BucketRelation,
  columns: string[],
  catalog: StoreCatalog,
): Sql {
  const distinct = columns.map((c, i) => sql`count(DISTINCT coalesce(${trusted(c)}, '')) AS ${trusted(`c${i}`)}`);
  return sql`SELECT ${join([sql`max(visitor_key) AS max_key`, sql`count(*) AS bucket_rows`, sql`count(DISTINCT dt) AS days`, ...distinct])}
FROM ${bucketTable(catalog, relation)} WHERE domain = ${str(domain)}`;
}
