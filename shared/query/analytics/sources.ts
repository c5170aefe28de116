import { bucketRelationFor, areBucketsAligned, type BucketRelation } from '../derived/pageview-buckets.js';
import { fullPartitions, type FragmentMarks, type FullPartitions } from '../derived/session-fragments.js';
import { isBitmapCountCheaper, MAX_BITMAP_GROUPS, type StoreShape } from '../derived/visitor-bitmaps.js';
import { isRowFilter, isSessionPageFilter } from '../../requests/filters.js';
import { canPathListsFilter, rowFieldColumns } from '../scope/filters.js';
import type { StoreCatalog } from '../sql/catalog.js';
import type { OffsetSegment } from '../../time/time-zone.js';
import {
  isDayBased,
  isRowFieldDimension,
  isSessionPage,
  isTimeDimension,
  type AnalyticsQuery,
  type Dimension,
} from '../../requests/query.js';

// Which stored relations answer a /v1/query (docs/STORAGE.md): decided once here, from the query and the store's
// catalog, and named in the plan as tagged variants, so the printer prints what was decided and decides nothing.
// Every source below gives the same answer as the raw rows; they differ only in what they read.

/** How the pageview buckets' distinct visitors are counted. */
export type VisitorCount =
  /** `count(DISTINCT column)` over the buckets' visitor column (the catalog's bucketVisitor). */
  | { count: 'distinct'; column: 'visitor_key' | 'visitor_id' }
  /** Bitmaps of the integer visitor keys, for few groups (derived/visitor-bitmaps.ts). */
  | { count: 'bitmaps' };

/** Where the row metrics (pageviews, visitors, revenue, conversions) are read from. */
export type RowSource =
  /** The kept event rows. */
  | { from: 'rows' }
  /**
   * Pageviews and visitors from the stored buckets of `relation`; revenue and conversions from the revenue rows.
   * `visitors` is null when no visitor count is asked for.
   */
  | { from: 'buckets'; relation: BucketRelation; visitors: VisitorCount | null };

/** How a session-metric query picks the pieces of its kept sessions. */
export type SessionPick =
  /** By the session ids of the kept rows (or all of them, with no filter). */
  | { by: 'kept-rows' }
  /**
   * By their stored path lists, when every filter is on `page`; the other pieces too, by whether one of a session's
   * pieces has a path that passes. `unlistedByRows`: the store may hold fragments without paths (the catalog's
   * fragmentsHavePaths): whole ones without paths, and every other piece, are picked by the kept rows instead.
   */
  | { by: 'paths'; unlistedByRows: boolean };

/** Where the session metrics (bounce rate, session duration) are read from. */
export type SessionSource =
  /** Every row of the range grouped by session. */
  | { from: 'rows' }
  /** The stored session fragments of the range's full partitions, plus the partial partitions' rows as pieces. */
  | {
      from: 'fragments';
      partitions: FullPartitions;
      pick: SessionPick;
      marks: FragmentMarks;
      /**
       * The whole fragments are read as the store's session counts (derived/session-counts.ts): for session
       * metrics by time, by one attribute or by nothing, without filters.
       */
      counts: boolean;
    };

/** Where the visitor filters and the event dimension find the visitors who had a custom event or exit link. */
export type EventVisitorSource =
  /** The event rows of the range. */
  | { from: 'rows' }
  /**
   * The custom-event buckets of the range (derived/custom-event-buckets.ts). `visitor` is the column their visitors
   * are matched by with the pageview and page buckets (the catalog's bucketVisitor); event rows match by id.
   */
  | { from: 'buckets'; visitor: 'visitor_key' | 'visitor_id' };

export interface QuerySources {
  /** Null when no requested metric is a row metric. */
  rows: RowSource | null;
  /** Null when no requested metric is a session metric. */
  sessions: SessionSource | null;
  /** Null when the query has neither a visitor filter nor the event dimension. */
  eventVisitors: EventVisitorSource | null;
}

/** Whether every session piece is picked by its own paths, so none needs the kept rows' session ids (sessionPieces). */
export function arePiecesPickedByPaths(source: SessionSource): boolean {
  return source.from === 'fragments' && source.pick.by === 'paths' && !source.pick.unlistedByRows;
}

/** Turns a derived relation off, to plan the raw-row form of a query (tests and benchmarks compare the two). */
export interface SourceOptions {
  /** Use stored session fragments where they are exact (default true). */
  sessionFragments?: boolean;
  /** Use stored pageview or page buckets where they are exact (default true). */
  pageviewBuckets?: boolean;
  /** Pick sessions by their fragments' path lists where only page filters apply (default true). */
  pathLists?: boolean;
  /** Read the whole fragments' session counts where the store keeps them (default true). */
  sessionCounts?: boolean;
  /** Find the visitors of visitor filters and event segments in the custom-event buckets where exact (default true). */
  customEventBuckets?: boolean;
  /** The local store's shape for the query's bucket columns: bounds visitor bitmaps by any dimension. */
  storeShape?: StoreShape;
}

/** What the metrics of a query need, as the planner worked it out. */
export interface MetricNeeds {
  pageviews: boolean;
  visitors: boolean;
  revenue: boolean;
  sessions: boolean;
}

export function decideSources(
  query: AnalyticsQuery,
  needs: MetricNeeds,
  segments: OffsetSegment[] | undefined,
  catalog: StoreCatalog,
  options: SourceOptions = {},
): QuerySources {
  const rowMetrics = needs.pageviews || needs.visitors || needs.revenue;
  // A session's entry and exit pages are known only from all its rows in the range (buckets keep no session and
  // fragments no exit page), and buckets and session counts hold quarter hours, not minutes: such queries read the
  // raw rows.
  const fromRows =
    query.dimensions.some(isSessionPage) ||
    query.filters.some(isSessionPageFilter) ||
    query.dimensions.includes('minute');
  return {
    rows: rowMetrics ? (fromRows ? { from: 'rows' } : rowSource(query, needs, segments, catalog, options)) : null,
    sessions: needs.sessions ? (fromRows ? { from: 'rows' } : sessionSource(query, segments, catalog, options)) : null,
    eventVisitors: eventVisitorSource(query, catalog, options),
  };
}

/**
 * The custom-event buckets hold every row a visitor filter or the event dimension tests, by visitor and 15-minute
 * bucket. Both ask who had such a row anywhere in the range, never when in local time: exact whenever the range's
 * ends fall on bucket edges.
 */
function eventVisitorSource(
  query: AnalyticsQuery,
  catalog: StoreCatalog,
  options: SourceOptions,
): EventVisitorSource | null {
  const visitorFilters = query.filters.filter((f) => !isRowFilter(f) && !isSessionPageFilter(f));
  if (!query.dimensions.includes('event') && visitorFilters.length === 0) return null;
  if (options.customEventBuckets === false || !areBucketsAligned(query.range, undefined)) return { from: 'rows' };
  return { from: 'buckets', visitor: catalog.bucketVisitor };
}

/**
 * Buckets hold pageviews by visitor, time and attribution (or page and referrer): exact for visitors and pageviews
 * grouped by time, by columns of one relation or by the event segment, with row filters on columns of the same
 * relation (a filter on a grouped column keeps whole bucket rows, as it keeps their rows; a visitor filter keeps
 * whole visitors, so their buckets), when the range and the zone's boundaries fall on bucket edges.
 */
function rowSource(
  query: AnalyticsQuery,
  needs: MetricNeeds,
  segments: OffsetSegment[] | undefined,
  catalog: StoreCatalog,
  options: SourceOptions,
): RowSource {
  const { columns } = bucketGrouping(query.dimensions);
  const filtered = query.filters.filter(isRowFilter).map((f) => rowFieldColumns[f.field]);
  const relation = bucketRelationFor([...columns, ...filtered], catalog.pageBucketReferrers);
  const usable =
    options.pageviewBuckets !== false &&
    (needs.pageviews || needs.visitors) &&
    relation !== null &&
    // The event segments are joined to the attribution buckets only.
    (relation === 'pageviews' || !query.dimensions.includes('event')) &&
    areBucketsAligned(query.range, segments);
  if (!usable) return { from: 'rows' };
  if (!needs.visitors) return { from: 'buckets', relation, visitors: null };
  const bitmaps = catalog.bucketVisitor === 'visitor_key' && bitmapsFit(query, columns, options.storeShape);
  return {
    from: 'buckets',
    relation,
    visitors: bitmaps ? { count: 'bitmaps' } : { count: 'distinct', column: catalog.bucketVisitor },
  };
}

function sessionSource(
  query: AnalyticsQuery,
  segments: OffsetSegment[] | undefined,
  catalog: StoreCatalog,
  options: SourceOptions,
): SessionSource {
  // Without one full partition every piece would be a raw row: the raw form is as cheap and simpler.
  const partitions = options.sessionFragments === false ? null : fullPartitions(query.range);
  if (!partitions) return { from: 'rows' };
  const byPaths = options.pathLists !== false && canPathListsFilter(query.filters);
  // The counts hold every whole fragment of a partition: only a query keeping every session of the range may read
  // them, by a time whose local boundaries fall on bucket edges (the full partitions' own edges do), or by one
  // attribute.
  const counts =
    options.sessionCounts !== false &&
    catalog.sessionCounts !== null &&
    catalog.wholeMarksExact &&
    query.filters.length === 0 &&
    countedDimensions(query.dimensions) &&
    areBucketsAligned(partitions, segments);
  return {
    from: 'fragments',
    partitions,
    pick: byPaths ? { by: 'paths', unlistedByRows: !catalog.fragmentsHavePaths } : { by: 'kept-rows' },
    // Finding the stale marks reads the fragments four more times; merging every fragment reads them once.
    marks: catalog.wholeMarksExact ? 'exact' : byPaths && !catalog.fragmentsHavePaths ? 'stale' : 'ignored',
    counts,
  };
}

/** Dimensions the session counts group by: none, dates and hours, or one session attribute. */
function countedDimensions(dimensions: readonly Dimension[]): boolean {
  if (dimensions.every(isTimeDimension)) return true;
  return dimensions.length === 1 && dimensions[0] !== 'event';
}

/** The bucket relation and columns whose store shape a plan asks for (shapeQuestion). */
export interface ShapeQuestion {
  relation: BucketRelation;
  columns: string[];
}

/**
 * What decided `sources` of `query` leave to the store's shape: the bucket relation and columns whose shape could
 * let visitors be counted by bitmaps where the query alone could not tell (the sources count distinct visitor keys);
 * null when no shape could change them.
 */
export function shapeQuestion(query: AnalyticsQuery, sources: QuerySources): ShapeQuestion | null {
  const rows = sources.rows;
  if (rows?.from !== 'buckets' || rows.visitors?.count !== 'distinct' || rows.visitors.column !== 'visitor_key')
    return null;
  if (!bitmapsMayFit(query)) return null;
  return { relation: rows.relation, columns: bucketGrouping(query.dimensions).columns };
}

/**
 * `sources` (which asked shapeQuestion) with the store's `shape` answering it: visitors counted by bitmaps where the
 * shape says they fit, else as decided. The same sources decideSources gives with the shape in its options.
 */
export function answerShapeQuestion(query: AnalyticsQuery, sources: QuerySources, shape: StoreShape): QuerySources {
  const rows = sources.rows;
  if (rows?.from !== 'buckets' || !rows.visitors) return sources;
  if (!bitmapsFit(query, bucketGrouping(query.dimensions).columns, shape)) return sources;
  return { ...sources, rows: { ...rows, visitors: { count: 'bitmaps' } } };
}

/** The bucket columns a query's dimensions group by (other than time and event). */
export function bucketGrouping(dimensions: readonly Dimension[]): { columns: string[] } {
  return {
    columns: dimensions.filter(isRowFieldDimension).map((d) => rowFieldColumns[d]),
  };
}

/**
 * Queries a store's shape can bound for bitmaps: grouped by dates and bucket columns, not hours (too sparse) or
 * events, and without a visitor filter. The shape bounds the buckets of every visitor; a filter keeps an unknown
 * share of them, too few for bitmaps of the whole key space to pay (docs/STORAGE.md, "Visitor bitmaps").
 */
function bitmapsMayFit({ dimensions, filters }: AnalyticsQuery): boolean {
  return !dimensions.includes('hour') && !dimensions.includes('event') && filters.length === 0;
}

/**
 * Whether visitors may be counted by bitmaps: statically for no dimension or dates up to MAX_BITMAP_GROUPS days;
 * by the store's shape for dates and bucket columns (bitmapsMayFit).
 */
function bitmapsFit(query: AnalyticsQuery, columns: string[], shape: StoreShape | undefined): boolean {
  const { dimensions } = query;
  const days = daysOf(query.range);
  if (dimensions.length === 0) return true;
  if (dimensions.length === 1 && isDayBased(dimensions[0]!) && days <= MAX_BITMAP_GROUPS) return true;
  if (!shape || !bitmapsMayFit(query)) return false;
  // Weeks and months are at most as many groups as days.
  const groups = columns.reduce((n, c) => n * (shape.distinct[c] ?? Infinity), dimensions.some(isDayBased) ? days : 1);
  return isBitmapCountCheaper(groups, days, shape);
}

function daysOf(range: { from: Date; to: Date }): number {
  return Math.ceil((range.to.getTime() - range.from.getTime()) / 86_400_000) + 1;
}
