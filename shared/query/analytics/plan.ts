import { offsetSegments, type OffsetSegment } from '../../time/time-zone.js';
import {
  isRowFieldDimension,
  isSessionPage,
  isSortMetric,
  isTimeDimension,
  type AnalyticsQuery,
  type Metric,
  type SessionPageDimension,
  type SortOrder,
} from '../../requests/query.js';
import type { EventScope } from '../scope/event-scope.js';
import { isRowFilter, isSessionPageFilter, type Filter } from '../../requests/filters.js';
import { filterColumns, rowFieldColumns } from '../scope/filters.js';
import type { StoreCatalog } from '../sql/catalog.js';
import {
  answerShapeQuestion,
  arePiecesPickedByPaths,
  decideSources,
  shapeQuestion,
  type MetricNeeds,
  type QuerySources,
  type ShapeQuestion,
  type SourceOptions,
} from './sources.js';
import type { StoreShape } from '../derived/visitor-bitmaps.js';

// The plan of a /v1/query: what to read (its sources, decided once in sources.ts), which aggregates to build,
// how to order and page. It holds no SQL; print.ts turns it into either dialect.

export type RowAggregate = 'pageviews' | 'visitors' | 'revenue' | 'conversions';

export interface OrderTerm {
  /** A metric name or a dimension slot (`d0`, `d1`). */
  column: Metric | 'd0' | 'd1';
  direction: SortOrder;
}

export interface QueryPlan {
  scope: EventScope & { range: NonNullable<EventScope['range']> };
  /** Offsets of the request's zone over the range, present when a date or hour dimension needs local time. */
  segments?: OffsetSegment[];
  /** Event columns the statement reads. */
  columns: string[];
  /**
   * The session pages (entry_page, exit_page) the base rows carry, each row its session's: the dimensions group
   * every row of a session under them.
   */
  sessionPages: SessionPageDimension[];
  rowFilters: Filter[];
  /** Filters on a session's entry or exit page: keep the rows of the sessions whose page matches. */
  sessionFilters: Filter[];
  /** Filters that pick visitors by what they did (event, event_property, exit_link). */
  visitorFilters: Filter[];
  dimensions: AnalyticsQuery['dimensions'];
  /** The row aggregates the metrics need; empty when `sources.rows` is null. */
  rowAggregates: RowAggregate[];
  sources: QuerySources;
  /** What the statement reads besides its sources' relations, decided with them (readsOf). */
  reads: StatementReads;
  /** Requested metrics plus the sort metric when it was not requested. */
  metrics: Metric[];
  order: OrderTerm[];
  /** The requested page; the statement fetches one row more to learn whether more rows exist. */
  page: { offset: number; limit: number };
}

export interface StatementReads {
  /**
   * Whether the statement reads event rows at all: row metrics from buckets read none, unless revenue, sessions or
   * the visitors of visitor filters and event segments come from rows.
   */
  events: boolean;
  /** The column the buckets' visitors are matched by with the visitors of filters and segments. */
  bucketMatch: 'visitor_key' | 'visitor_id';
  /**
   * The columns the filters' visitors and the event segments carry: the id where event rows (or buckets matched by
   * id) meet them, the key where buckets matched by key do.
   */
  visitorColumns: ('visitor_id' | 'visitor_key')[];
  /**
   * The kept rows are read twice, by the row metrics and by the sessions picked by the kept rows' ids: worth
   * computing once where the dialect can (its `materialized`).
   */
  keptTwice: boolean;
}

/** Revenue and conversions come from revenue rows; pageviews and visitors from pageviews (or their buckets). */
export const isRevenueAggregate = (a: RowAggregate) => a === 'revenue' || a === 'conversions';

/** What a statement over `sources` reads besides their relations (StatementReads). */
function readsOf(sources: QuerySources, rowAggregates: RowAggregate[]): StatementReads {
  const { rows, sessions, eventVisitors } = sources;
  const events =
    rows?.from !== 'buckets' ||
    sessions !== null ||
    rowAggregates.some(isRevenueAggregate) ||
    eventVisitors?.from === 'rows';
  const bucketMatch = eventVisitors?.from === 'buckets' ? eventVisitors.visitor : 'visitor_id';
  const visitorColumns: StatementReads['visitorColumns'] = [
    ...(events || (rows?.from === 'buckets' && bucketMatch === 'visitor_id') ? (['visitor_id'] as const) : []),
    ...(rows?.from === 'buckets' && bucketMatch === 'visitor_key' ? (['visitor_key'] as const) : []),
  ];
  const keptTwice = rows !== null && sessions !== null && !arePiecesPickedByPaths(sessions);
  return { events, bucketMatch, visitorColumns, keptTwice };
}

const rowAggregatesOf: Record<Metric, RowAggregate[]> = {
  pageviews: ['pageviews'],
  visitors: ['visitors'],
  bounce_rate: [],
  avg_session_duration: [],
  visits: [],
  revenue: ['revenue'],
  conversions: ['conversions'],
  conversion_rate: ['conversions', 'visitors'],
};

export type PlanOptions = SourceOptions;

/** What the query's metrics need, and the zone's offsets when a time dimension groups by local time. */
function needsOf(query: AnalyticsQuery): {
  metrics: Metric[];
  rowAggregates: RowAggregate[];
  needs: MetricNeeds;
  segments?: OffsetSegment[];
} {
  const metrics = [...query.metrics];
  const sorted = query.sort?.field;
  if (sorted && isSortMetric(sorted) && !metrics.includes(sorted)) metrics.push(sorted);
  const rowAggregates = [...new Set(metrics.flatMap((m) => rowAggregatesOf[m]))];
  const needs: MetricNeeds = {
    pageviews: rowAggregates.includes('pageviews'),
    visitors: rowAggregates.includes('visitors'),
    revenue: rowAggregates.includes('revenue') || rowAggregates.includes('conversions'),
    sessions: metrics.some((m) => m === 'bounce_rate' || m === 'avg_session_duration' || m === 'visits'),
  };
  const localTime = query.dimensions.some(isTimeDimension);
  const segments = localTime ? offsetSegments(query.range.timeZone, query.range.from, query.range.to) : undefined;
  return { metrics, rowAggregates, needs, ...(segments ? { segments } : {}) };
}

export function planAnalyticsQuery(query: AnalyticsQuery, catalog: StoreCatalog, options: PlanOptions = {}): QueryPlan {
  const { metrics, rowAggregates, needs, segments } = needsOf(query);
  const columns = new Set(['ts', 'type', 'visitor_id']);
  if (needs.sessions) columns.add('session_id');
  if (rowAggregates.includes('revenue')) columns.add('amount_cents');
  for (const filter of query.filters) for (const c of filterColumns(filter)) columns.add(c);
  for (const d of query.dimensions) {
    if (d === 'event') columns.add('event_name');
    else if (isRowFieldDimension(d)) columns.add(rowFieldColumns[d]);
    else if (isSessionPage(d)) for (const c of ['session_id', 'url_path']) columns.add(c);
  }
  const sources = decideSources(query, needs, segments, catalog, options);
  return {
    scope: { domain: query.domain, isDev: false, range: query.range },
    ...(segments ? { segments } : {}),
    columns: [...columns],
    sessionPages: [
      ...new Set([
        ...query.dimensions.filter(isSessionPage),
        ...query.filters.filter(isSessionPageFilter).map((f) => f.field),
      ]),
    ],
    rowFilters: query.filters.filter(isRowFilter),
    sessionFilters: query.filters.filter(isSessionPageFilter),
    visitorFilters: query.filters.filter((f) => !isRowFilter(f) && !isSessionPageFilter(f)),
    dimensions: query.dimensions,
    rowAggregates,
    sources,
    reads: readsOf(sources, rowAggregates),
    metrics,
    order: orderOf(query, metrics),
    page: { offset: query.offset, limit: query.limit },
  };
}

/**
 * The plan of `query`, made once: complete, or with the one question it leaves to the store's shape (whether
 * visitors may be counted by bitmaps for dimensions the query alone cannot bound) and how its answer finishes it.
 * An unanswered question leaves the plan as it is, exact either way.
 */
export type Planning =
  | { plan: QueryPlan; question?: undefined }
  | { plan: QueryPlan; question: ShapeQuestion; answered(shape: StoreShape | undefined): QueryPlan };

export function planQuery(query: AnalyticsQuery, catalog: StoreCatalog, options: PlanOptions = {}): Planning {
  const plan = planAnalyticsQuery(query, catalog, options);
  const question = options.storeShape ? null : shapeQuestion(query, plan.sources);
  if (!question) return { plan };
  return {
    plan,
    question,
    answered: (shape) => (shape ? { ...plan, sources: answerShapeQuestion(query, plan.sources, shape) } : plan),
  };
}

/**
 * The order of docs/API.md: the sort field (a metric, or a requested dimension's values), else time ascending, else
 * the first metric descending; ties by dimensions.
 */
function orderOf(query: AnalyticsQuery, metrics: Metric[]): OrderTerm[] {
  const slots = query.dimensions.map((d, i) => ({ d, slot: `d${i}` as 'd0' | 'd1' }));
  const byDimensions = slots.map(({ slot }) => ({ column: slot, direction: 'asc' as const }));
  if (query.dimensions.length === 0) return [];
  if (query.sort && isSortMetric(query.sort.field))
    return [{ column: query.sort.field, direction: query.sort.order }, ...byDimensions];
  const sorted = query.sort && slots.find(({ d }) => d === query.sort!.field);
  if (query.sort && sorted)
    return [
      { column: sorted.slot, direction: query.sort.order },
      ...byDimensions.filter((t) => t.column !== sorted.slot),
    ];
  const time = slots.find(({ d }) => isTimeDimension(d));
  if (time) return [{ column: time.slot, direction: 'asc' }, ...byDimensions.filter((t) => t.column !== time.slot)];
  return [{ column: metrics[0]!, direction: 'desc' }, ...byDimensions];
}
