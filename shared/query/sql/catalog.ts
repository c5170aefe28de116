import {
  CUSTOM_EVENT_BUCKETS_TABLE,
  derivedRelations,
  PAGE_BUCKETS_TABLE,
  PAGEVIEW_BUCKETS_TABLE,
  SESSION_COUNTS_TABLE,
  SESSION_FRAGMENTS_TABLE,
  UNMARKED_FRAGMENTS_TABLE,
  VISITOR_DAYS_TABLE,
} from '../../events/derived-relations.js';
import { STORE_LAYOUT } from '../../events/store-layout.js';
import { join, sql, str, trusted, type Sql, type SqlParam } from './sql.js';

// What an engine's store holds, apart from how its SQL is spelled (dialect.ts): the names of the stored
// relations and the facts about their contents that decide which of them can answer a query. The planners read
// these facts once (analytics/sources.ts); the printers only print the relation names.

/** The stored relations: the events and the derived relations beside them (docs/STORAGE.md). */
export type StoredRelation =
  'events' | 'sessionFragments' | 'pageviewBuckets' | 'pageBuckets' | 'visitorDays' | 'customEventBuckets';

/**
 * The kinds of store, the one difference every fact below derives from (storeFacts): the local `snapshot` store,
 * whose writers key, mark and upgrade every file before a reader sees it and publish whole snapshots; a domain of the
 * events `bucket` on S3, whose files are all of the current layout (STORE_LAYOUT) but unkeyed, marked whole as of
 * upkeep's last rewrite, and replaced in place by upkeep; and a domain of the bucket that upkeep has not yet brought
 * to the current layout (`bucketBeforeUpgrade`), whose derived files may lack columns added since they were written.
 */
export type StoreProfile = 'snapshot' | 'bucket' | 'bucketBeforeUpgrade';

export interface StoreCatalog {
  readonly profile: StoreProfile;
  /** Each relation as the engine names it: a view over Parquet files locally, a Glue table on AWS. */
  readonly tables: Readonly<Record<StoredRelation, Sql>>;
  /**
   * The pageview buckets' column that tells visitors apart: the integer `visitor_key` every local import assigns
   * (cheaper to hash than text, and what visitor bitmaps count), or `visitor_id` where no writer can assign
   * keys (a bucket fed by `import --s3`).
   */
  readonly bucketVisitor: 'visitor_key' | 'visitor_id';
  /**
   * Every visitor day carries its visitor's `visitor_key` (the same key as in the buckets): true of the local
   * store, whose writers key every file before a reader sees it; not of a bucket fed by `import --s3`.
   */
  readonly visitorDayKeys: boolean;
  /**
   * Every page bucket carries `referrer_domain`: true of the local store, whose backfill derives files of an older
   * version again; not of a bucket whose files may predate the column.
   */
  readonly pageBucketReferrers: boolean;
  /**
   * Every visitor day carries its visitor's first pageview and session ids (`first_pageview_ts` to `session_ids`):
   * true of the local store, whose backfill derives files of an older version again; not of a bucket whose files
   * may predate the columns.
   */
  readonly visitorDayDetails: boolean;
  /**
   * Every session fragment carries `url_paths`: true of the local store, whose writers derive files of an older
   * version again before marking any fragment whole or answering a query; not of a bucket synced from an older
   * local store.
   */
  readonly fragmentsHavePaths: boolean;
  /**
   * Every fragment marked whole is its session's only fragment: true of the local store, whose writers mark again in
   * the transaction that adds fragments. On S3 a mark holds as of the upkeep run that wrote it: a later ingest may
   * add unmarked fragments to a marked session (never a second marked one), so a query merges a marked fragment
   * whose session has an unmarked one in the partitions it reads.
   */
  readonly wholeMarksExact: boolean;
  /**
   * The session counts of the whole fragments per time bucket and attribute value (derived/session-counts.ts),
   * where the store keeps them: the local store, whose marks are exact. Null on S3.
   */
  readonly sessionCounts: Sql | null;
  /**
   * The session fragments not marked whole, kept apart from the fragment files (the local store): the merged
   * pieces' scan reads them instead of picking them out of every fragment. Null on S3.
   */
  readonly unmarkedFragments: Sql | null;
  /**
   * Whether upkeep may be replacing files under the readers (the S3 store: shared/store/file-states-repo.ts), so a
   * query must first learn which files to leave out (withExcludedFiles). A local store swaps whole snapshots.
   */
  readonly filesReplacedInPlace: boolean;
  /**
   * Where each relation's files are, as the engine spells a file's `"$path"` (`s3://<bucket>/events`): a file left
   * out by its whole path is never opened (Trino prunes it when it lists the splits; measured on Trino 476, where a
   * condition on a function of the path opens the file first), so upkeep may delete it under a running query.
   * Unknown, files are left out by their names alone.
   */
  readonly locations?: Readonly<Record<StoredRelation, string>>;
}

/** The facts each kind of store gives its catalog (StoreCatalog documents each). */
type StoreFacts = Omit<StoreCatalog, 'profile' | 'tables' | 'locations'>;
const storeFacts: Record<StoreProfile, StoreFacts> = {
  snapshot: {
    bucketVisitor: 'visitor_key',
    fragmentsHavePaths: true,
    visitorDayKeys: true,
    pageBucketReferrers: true,
    visitorDayDetails: true,
    wholeMarksExact: true,
    sessionCounts: trusted(SESSION_COUNTS_TABLE),
    unmarkedFragments: trusted(UNMARKED_FRAGMENTS_TABLE),
    filesReplacedInPlace: false,
  },
  bucket: {
    bucketVisitor: 'visitor_id',
    fragmentsHavePaths: true,
    visitorDayKeys: false,
    pageBucketReferrers: true,
    visitorDayDetails: true,
    wholeMarksExact: false,
    sessionCounts: null,
    unmarkedFragments: null,
    filesReplacedInPlace: true,
  },
  bucketBeforeUpgrade: {
    bucketVisitor: 'visitor_id',
    fragmentsHavePaths: false,
    visitorDayKeys: false,
    pageBucketReferrers: false,
    visitorDayDetails: false,
    wholeMarksExact: false,
    sessionCounts: null,
    unmarkedFragments: null,
    filesReplacedInPlace: true,
  },
};

/**
 * The catalog for a domain whose files are of `layout` (its file states, shared/store/file-states-repo.ts): a bucket
 * domain below the current layout is read as `bucketBeforeUpgrade` until upkeep has rewritten its files
 * (docs/STORAGE.md, "Upgrading the S3 store"). Other catalogs are returned as they are.
 */
export function withStoreLayout(catalog: StoreCatalog, layout: number): StoreCatalog {
  if (catalog.profile !== 'bucket' || layout >= STORE_LAYOUT) return catalog;
  return { ...catalog, profile: 'bucketBeforeUpgrade', ...storeFacts.bucketBeforeUpgrade };
}

/** The local store: views named like the Glue tables, integer visitor keys, path lists on every whole fragment. */
export const localCatalog: StoreCatalog = {
  profile: 'snapshot',
  tables: {
    events: trusted('events'),
    sessionFragments: trusted(SESSION_FRAGMENTS_TABLE),
    pageviewBuckets: trusted(PAGEVIEW_BUCKETS_TABLE),
    pageBuckets: trusted(PAGE_BUCKETS_TABLE),
    visitorDays: trusted(VISITOR_DAYS_TABLE),
    customEventBuckets: trusted(CUSTOM_EVENT_BUCKETS_TABLE),
  },
  ...storeFacts.snapshot,
};

/** Glue tables of the derived relations, each defaulting to the relation's own name. */
export interface DerivedTableNames {
  sessionsTable?: string;
  bucketsTable?: string;
  pagesTable?: string;
  visitorsTable?: string;
  customEventsTable?: string;
}

/**
 * The stack's Glue tables: `table` holds the events, `derived` names the derived relations' tables; all are
 * printed quoted as `"database"."table"`. The facts are those of a domain at the current layout (`bucket`);
 * withStoreLayout gives a domain's own.
 */
export function athenaCatalog(
  database: string,
  table: string,
  derived: DerivedTableNames = {},
  location?: string,
): StoreCatalog {
  const {
    sessionsTable = SESSION_FRAGMENTS_TABLE,
    bucketsTable = PAGEVIEW_BUCKETS_TABLE,
    pagesTable = PAGE_BUCKETS_TABLE,
    visitorsTable = VISITOR_DAYS_TABLE,
    customEventsTable = CUSTOM_EVENT_BUCKETS_TABLE,
  } = derived;
  const identifier = /^[a-z0-9_]+$/;
  if (
    ![database, table, sessionsTable, bucketsTable, pagesTable, visitorsTable, customEventsTable].every((name) =>
      identifier.test(name),
    )
  )
    throw new Error('Glue names must match [a-z0-9_]+');
  const quoted = (name: string) => trusted(`"${database}"."${name}"`);
  return {
    profile: 'bucket',
    tables: {
      events: quoted(table),
      sessionFragments: quoted(sessionsTable),
      pageviewBuckets: quoted(bucketsTable),
      pageBuckets: quoted(pagesTable),
      visitorDays: quoted(visitorsTable),
      customEventBuckets: quoted(customEventsTable),
    },
    ...storeFacts.bucket,
    ...(location === undefined ? {} : { locations: relationLocations(location.replace(/\/+$/, '')) }),
  };
}

/**
 * Whether a file's date is when it became readable (S3: when it was uploaded, after its hide; the stack's tables and
 * any catalog that does not say are on S3). Not so in a local folder read by Trino (`local://`, `npm start` with
 * Trino): a snapshot's files are written before it is shown and keep their dates in the next snapshot.
 */
function uploadsDated(catalog: StoreCatalog): boolean {
  return !catalog.locations || catalog.locations.events.startsWith('s3://');
}

/** Each relation's folder under the bucket's URL (docs/STORAGE.md: `events/`, and each derived relation's folder). */
function relationLocations(bucket: string): Record<StoredRelation, string> {
  const folder = (table: string) => derivedRelations.find((r) => r.table === table)!.folder;
  return {
    events: `${bucket}/events`,
    sessionFragments: `${bucket}/${folder(SESSION_FRAGMENTS_TABLE)}`,
    pageviewBuckets: `${bucket}/${folder(PAGEVIEW_BUCKETS_TABLE)}`,
    pageBuckets: `${bucket}/${folder(PAGE_BUCKETS_TABLE)}`,
    visitorDays: `${bucket}/${folder(VISITOR_DAYS_TABLE)}`,
    customEventBuckets: `${bucket}/${folder(CUSTOM_EVENT_BUCKETS_TABLE)}`,
  };
}

/**
 * The catalog with each relation read without the hidden files (shared/store/file-states-repo.ts, `hiddenFiles`):
 * `names`, file names left out in every partition, and `files`, `dt=<day>/<file>` left out in that partition (the
 * same names in every relation's folder, all of one `domain`); and on S3 without every file dated at or after
 * `visibleBefore` (a timestamp parameter: uploaded after the states were read, so not named in them). Each table
 * becomes a subquery on the file's path and date; the values are bound in its WHERE, as Athena allows them. Where the
 * catalog knows its relations' locations, `files` are left out by whole path, which Trino applies before it opens a
 * file.
 */
export function withExcludedFiles(
  catalog: StoreCatalog,
  hidden: { names: readonly string[]; files: readonly string[] },
  visibleBefore: SqlParam,
  domain: string,
): StoreCatalog {
  const dated = uploadsDated(catalog);
  if (!dated && hidden.names.length === 0 && hidden.files.length === 0) return catalog;
  const without = (relation: StoredRelation, table: Sql) => {
    const conditions: Sql[] = dated ? [sql`"$file_modified_time" < with_timezone(${visibleBefore}, 'UTC')`] : [];
    if (hidden.names.length)
      conditions.push(sql`regexp_extract("$path", '[^/]+$') NOT IN (${join(hidden.names.map((f) => sql`${str(f)}`))})`);
    const root = catalog.locations?.[relation];
    // Files by their whole path where it is known: the ones upkeep deletes are never opened.
    if (hidden.files.length && root)
      conditions.push(
        sql`"$path" NOT IN (${join(hidden.files.map((f) => sql`${str(`${root}/domain=${domain}/${f}`)}`))})`,
      );
    else if (hidden.files.length)
      conditions.push(
        sql`regexp_extract("$path", '[^/]+/[^/]+$') NOT IN (${join(hidden.files.map((f) => sql`${str(f)}`))})`,
      );
    return sql`(SELECT * FROM ${table} WHERE ${join(conditions, ' AND ')})`;
  };
  const tables = Object.fromEntries(
    Object.entries(catalog.tables).map(([relation, table]) => [relation, without(relation as StoredRelation, table)]),
  ) as Record<StoredRelation, Sql>;
  return { ...catalog, tables };
}
