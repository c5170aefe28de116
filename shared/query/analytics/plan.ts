import { offsetSegments, type OffsetSegment } from '../../time/time-zone.js';
import type { AnalyticsQuery, Dimension, Metric, SortOrder } from './request.js';
import type { EventScope } from '../scope/event-scope.js';
import { filterColumns, isRowFilter, pathListFilters, rowFieldColumns, type Filter, type RowFilterField } from '../scope/filters.js';
import { bucketRelationFor, bucketsAlign, type BucketRelation } from '../derived/pageview-buckets.js';
import { wholePartitions, type WholePartitions } from '../derived/session-fragments.js';
import { bitmapsPay, MAX_BITMAP_GROUPS, type StoreShape } from '../derived/visitor-bitmaps.js';

// The plan of a /v1/query: what to read, which aggregates to build, how to order and page. It holds no SQL;
// print-analytics-query.ts turns it into either dialect.

export type RowAggregate = 'pageviews' | 'visitors' | 'revenue' | 'conversions';

export interface OrderTerm {
  /** A metric name or a dimension slot (`d0`, `d1`). */
  column: Metric | 'd0' | 'd1';
  direction: SortOrder;
}

export interface QueryPlan {
  scope: EventScope;
  /** Offsets of the request's zone over the range, present when a date or hour dimension needs local time. */
  segments?: OffsetSegment[];
  columns: string[];
  rowFilters: Filter[];
  /** Filters that pick visitors by what they did (event, event_property, exit_link). */
  visitorFilters: Filter[];
  dimensions: Dimension[];
  rowAggregates: RowAggregate[];
  sessionAggregates: boolean;
  /**
   * Session metrics read the stored session fragments of these whole partitions (plus the partial partitions'
   * rows) instead of grouping every raw row; absent when they are computed from raw rows.
   */
  sessionFragments?: WholePartitions;
  /**
   * With session fragments and only page filters: whole fragments are picked by their stored path lists rather
   * than by the kept rows' session ids (docs/STORAGE.md).
   */
  pathLists?: boolean;
  /** Row metrics (visitors, pageviews) read these stored buckets instead of the event rows. */
  buckets?: BucketRelation;
  /** Bucket visitors are few groups, countable by bitmaps of their keys where the dialect has keys (visitor-bitmaps.ts). */
  visitorBitmaps?: boolean;
  /** Requested metrics plus the sort metric when it was not requested. */
  metrics: Metric[];
  order: OrderTerm[];
  /** One more than the page size, to learn whether more rows exist. */
  fetch: number;
  offset: number;
}

const rowAggregatesOf: Record<Metric, RowAggregate[]> = {
  pageviews: ['pageviews'],
  visitors: ['visitors'],
  bounce_rate: [],
  avg_session_duration: [],
  revenue: ['revenue'],
  conversions: ['conversions'],
  conversion_rate: ['conversions', 'visitors'],
};

export interface PlanOptions {
  /** Use stored session fragments where they are exact (default true); false plans the raw-row form. */
  sessionFragments?: boolean;
  /** Use stored pageview or page buckets where they are exact (default true); false reads the event rows. */
  pageviewBuckets?: boolean;
  /** Pick whole session fragments by their path lists where only page filters apply (default true). */
  pathLists?: boolean;
  /** The local store's shape for the query's bucket columns (bucketGrouping): bounds visitor bitmaps by any dimension. */
  storeShape?: StoreShape;
}

/** The bucket columns a query's dimensions group by (other than time and event), and the relation holding them. */
export function bucketGrouping(dimensions: readonly Dimension[]): { columns: string[]; relation: BucketRelation | null } {
  const columns = dimensions.filter((d) => d !== 'date' && d !== 'hour' && d !== 'event').map((d) => rowFieldColumns[d as RowFilterField]);
  return { columns, relation: bucketRelationFor(columns) };
}

/** Dimensions a store's shape can bound for bitmaps: dates and bucket columns, not hours (too sparse) or events. */
export function bitmapsMayFit(dimensions: readonly Dimension[]): boolean {
  return !dimensions.includes('hour') && !dimensions.includes('event');
}

/**
 * Whether visitors may be counted by bitmaps: statically for no dimension or dates up to MAX_BITMAP_GROUPS days;
 * by the store's shape for dates and bucket columns (not hours: too sparse, nor the event segment's join).
 */
function bitmapsFit(dimensions: readonly Dimension[], columns: string[], days: number, shape: StoreShape | undefined): boolean {
  if (dimensions.length === 0) return true;
  if (dimensions.length === 1 && dimensions[0] === 'date' && days <= MAX_BITMAP_GROUPS) return true;
  if (!shape || !bitmapsMayFit(dimensions)) return false;
  const groups = columns.reduce((n, c) => n * (shape.distinct[c] ?? Infinity), dimensions.includes('date') ? days : 1);
  return bitmapsPay(groups, days, shape);
}

export function planAnalyticsQuery(query: AnalyticsQuery, options: PlanOptions = {}): QueryPlan {
  const metrics = [...query.metrics];
  if (query.sort && !metrics.includes(query.sort.field)) metrics.push(query.sort.field);

  const rowAggregates = [...new Set(metrics.flatMap((m) => rowAggregatesOf[m]))];
  const sessionAggregates = metrics.includes('bounce_rate') || metrics.includes('avg_session_duration');
  const rowFilters = query.filters.filter(isRowFilter);
  const visitorFilters = query.filters.filter((f) => !isRowFilter(f));
  const localTime = query.dimensions.includes('date') || query.dimensions.includes('hour');

  const columns = new Set(['ts', 'type', 'visitor_id']);
  if (sessionAggregates) columns.add('session_id');
  if (rowAggregates.includes('revenue')) columns.add('amount_cents');
  for (const filter of query.filters) for (const c of filterColumns(filter)) columns.add(c);
  for (const d of query.dimensions) {
    if (d === 'event') columns.add('event_name');
    else if (d !== 'date' && d !== 'hour') columns.add(rowFieldColumns[d as RowFilterField]);
  }

  const { range } = query;
  const segments = localTime ? offsetSegments(query.timeZone, range.from, range.to) : undefined;
  // Buckets hold pageviews by visitor, time and attribution (or page): exact for visitors and pageviews without
  // filters, by time, attribution dimensions (or page) or the event segment, when the range and the zone's
  // boundaries fall on bucket edges (revenue and conversions then come from the revenue rows alone).
  const { columns: grouped, relation } = bucketGrouping(query.dimensions);
  const buckets =
    options.pageviewBuckets !== false &&
    rowAggregates.some((a) => a === 'visitors' || a === 'pageviews') &&
    query.filters.length === 0 &&
    relation !== null &&
    // The event segments are joined to the attribution buckets only.
    (relation === 'pageviews' || !query.dimensions.includes('event')) &&
    bucketsAlign(range, segments);
  const days = Math.ceil((range.to.getTime() - range.from.getTime()) / 86_400_000) + 1;
  const visitorBitmaps = buckets && rowAggregates.includes('visitors') && bitmapsFit(query.dimensions, grouped, days, options.storeShape);
  // Without one whole partition, every piece would be a raw row: the raw form is as cheap and simpler.
  const whole = sessionAggregates && options.sessionFragments !== false ? wholePartitions(range) : null;
  const pathLists = whole !== null && options.pathLists !== false && pathListFilters(query.filters);
  return {
    scope: { domain: query.domain, isDev: false, range },
    ...(segments ? { segments } : {}),
    columns: [...columns],
    rowFilters,
    visitorFilters,
    dimensions: query.dimensions,
    rowAggregates,
    sessionAggregates,
    ...(whole ? { sessionFragments: whole } : {}),
    ...(pathLists ? { pathLists } : {}),
    ...(buckets ? { buckets: relation } : {}),
    ...(visitorBitmaps ? { visitorBitmaps } : {}),
    metrics,
    order: orderOf(query, metrics),
    fetch: query.limit + 1,
    offset: query.offset,
  };
}

/** semantics.md: the sort metric, else time ascending, else the first metric descending; ties by dimensions. */
function orderOf(query: AnalyticsQuery, metrics: Metric[]): OrderTerm[] {
  const slots = query.dimensions.map((d, i) => ({ d, slot: `d${i}` as 'd0' | 'd1' }));
  const byDimensions = slots.map(({ slot }) => ({ column: slot, direction: 'asc' as const }));
  if (query.dimensions.length === 0) return [];
  if (query.sort) return [{ column: query.sort.field, direction: query.sort.order }, ...byDimensions];
  const time = slots.find(({ d }) => d === 'date' || d === 'hour');
  if (time) return [{ column: time.slot, direction: 'asc' }, ...byDimensions.filter((t) => t.column !== time.slot)];
  return [{ column: metrics[0]!, direction: 'desc' }, ...byDimensions];
}
