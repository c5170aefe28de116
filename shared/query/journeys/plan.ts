import { offsetSegments, type OffsetSegment } from '../../time/time-zone.js';
import type { EventScope } from '../scope/event-scope.js';
import { type Filter } from '../../requests/filters.js';
import { filterColumns } from '../scope/filters.js';
import { fullPartitions, type FullPartitions } from '../derived/session-fragments.js';
import type { SqlTarget } from '../sql/target.js';
import type {
  SortOrder,
  TimelineQuery,
  VisitorBound,
  VisitorListQuery,
  VisitorSortField,
} from '../../requests/journeys.js';

// Plans of the journeys queries: what to read and how to filter, order and page. They hold no SQL;
// journeys-list-sql.ts and journeys-visitor-sql.ts print them for either dialect.

/** A per-visitor column of the list's aggregate, usable for ordering. */
export type VisitorColumn =
  'last_ts' | 'first_ts' | 'pageview_count' | 'session_count' | 'total_revenue_cents' | 'latest_revenue_ts';

export interface VisitorOrderTerm {
  column: VisitorColumn | 'visitor_id';
  direction: SortOrder;
  nullsLast: boolean;
}

export interface VisitorListPlan {
  scope: EventScope & { range: NonNullable<EventScope['range']> };
  /** Offsets of the request's zone over the range, for the timestamps the list shows. */
  segments: OffsetSegment[];
  /** Columns of the listed visitors' details (every aggregate and first-pageview attribute). */
  columns: string[];
  /** Columns of the first pass over every visitor: the sort key, the filters, bounds and revenue conditions. */
  rankColumns: string[];
  /** A visitor is listed when one of their rows passes all of these at once. */
  filters: Filter[];
  bounds: VisitorBound[];
  hasRevenue: boolean;
  /** Keep visitors whose first revenue row ever lies in the range. */
  firstPurchase: boolean;
  order: VisitorOrderTerm[];
  /** The requested page; the statement fetches one row more to learn whether more rows exist. */
  page: { offset: number; limit: number };
  /**
   * What the first pass ranks visitors over: the stored visitor days of the range's full partitions (plus the
   * partial partitions' rows as pieces), or the rows: with filters (they need rows), a session count (days
   * cannot count sessions), or no full day in the range.
   */
  ranking: { from: 'rows' } | { from: 'visitor-days'; partitions: FullPartitions };
  /**
   * How a page is read: 'page-then-details' where statements are in-process (the page, then its visitors' details
   * by a statement of their own, printListedDetails, whose partitions and ids are values DuckDB prunes and tests
   * by; it does not prune by a subquery's result); 'one' where each statement is billed and waited for.
   */
  statements: 'one' | 'page-then-details';
  /**
   * The page's visitors found beyond a cut (CutSort) instead of grouping every visitor of the range: a sort by an
   * extreme over visitor days with no condition on visitors, where statements are in-process (on Athena the cut
   * would read the visitor days three times, and Athena bills bytes read). Null otherwise.
   */
  cut: CutSort | null;
  /** With the cut, the range's visitors are counted by bitmaps of their keys: every visitor day carries one. */
  cutCountsKeys: boolean;
  /**
   * Where a page's details come from, read apart or joined to the page: the visitor days of the range's full
   * partitions (with the partial partitions' rows) where they carry the details (the catalog's visitorDayDetails),
   * else the rows.
   */
  details: { from: 'rows' } | { from: 'visitor-days'; partitions: FullPartitions };
}

/**
 * A sort whose value is an extreme over the pieces (the newest last time, or the oldest first time), so a visitor's
 * sort value is the value of one of its pieces. `beyond` keeps the pieces at or beyond a value in the sort's
 * direction.
 */
export interface CutSort {
  column: 'last_ts' | 'first_ts';
  direction: 'desc' | 'asc';
  beyond: '>=' | '<=';
}

export interface VisitorListPlanOptions {
  /** Rank over, and read details from, stored visitor days where they are exact (default true); false plans the raw-row form. */
  visitorDays?: boolean;
  /** Read a page with its details in one statement whatever the target (benchmarks compare the forms). */
  oneStatement?: boolean;
}

export type TimelineType = 'pageview' | 'event' | 'revenue' | 'auto';

export interface TimelinePlan {
  scope: EventScope;
  segments: OffsetSegment[];
  types: TimelineType[];
  /** The requested page; the statement fetches one row more to learn whether more rows exist. */
  page: { offset: number; limit: number };
}

/** Columns every list query reads: what the aggregates and the first-pageview attributes need. */
const listColumns = [
  'ts',
  'type',
  'visitor_id',
  'session_id',
  'amount_cents',
  'country',
  'browser',
  'os',
  'device',
  'referrer_domain',
  'url_path',
];

/** Stored columns each per-visitor aggregate reads. */
const aggregateColumns: Record<VisitorColumn, string[]> = {
  last_ts: ['ts'],
  first_ts: ['ts'],
  pageview_count: ['type'],
  session_count: ['session_id'],
  total_revenue_cents: ['type', 'amount_cents'],
  latest_revenue_ts: ['type', 'ts'],
};

const sortColumns: Record<VisitorSortField, VisitorColumn> = {
  last_seen: 'last_ts',
  first_seen: 'first_ts',
  pageviews: 'pageview_count',
  sessions: 'session_count',
  revenue: 'total_revenue_cents',
  latest_revenue: 'latest_revenue_ts',
};

export function planVisitorList(
  query: VisitorListQuery,
  target: SqlTarget,
  options: VisitorListPlanOptions = {},
): VisitorListPlan {
  const inProcess = target.dialect.cost === 'in-process';
  const columns = new Set(listColumns);
  for (const filter of query.filters) for (const c of filterColumns(filter)) columns.add(c);
  const sortColumn = sortColumns[query.sort.field];
  const rankColumns = new Set(['visitor_id', ...aggregateColumns[sortColumn]]);
  for (const filter of query.filters) for (const c of filterColumns(filter)) rankColumns.add(c);
  for (const bound of query.bounds) for (const c of aggregateColumns[bound.aggregate]) rankColumns.add(c);
  if (query.hasRevenue || query.firstPurchase) rankColumns.add('type');
  const { range } = query;
  const sessionCounts = sortColumn === 'session_count' || query.bounds.some((b) => b.aggregate === 'session_count');
  const daysExact = (options.visitorDays ?? true) && !query.filters.length && !sessionCounts;
  const partitions = daysExact ? fullPartitions(range) : null;
  const order: VisitorOrderTerm[] = [
    // Only latest_revenue can be null (visitors without revenue), and those come last either way (docs/API.md).
    { column: sortColumn, direction: query.sort.order, nullsLast: true },
    { column: 'visitor_id', direction: 'asc', nullsLast: false },
  ];
  const conditionsOnVisitors =
    query.filters.length > 0 || query.bounds.length > 0 || query.hasRevenue || query.firstPurchase;
  const cut = inProcess && partitions && !conditionsOnVisitors ? cutSort(order[0]!) : null;
  const detailPartitions =
    (options.visitorDays ?? true) && target.catalog.visitorDayDetails ? fullPartitions(range) : null;
  return {
    // The domain's days bound the first-purchase check, which reads before the range.
    scope: { domain: query.domain, isDev: query.isDev, range, ...(query.days ? { days: query.days } : {}) },
    segments: offsetSegments(query.range.timeZone, range.from, range.to),
    columns: [...columns],
    rankColumns: [...rankColumns],
    filters: query.filters,
    bounds: query.bounds,
    hasRevenue: query.hasRevenue,
    firstPurchase: query.firstPurchase,
    order,
    page: { offset: query.offset, limit: query.limit },
    ranking: partitions ? { from: 'visitor-days', partitions } : { from: 'rows' },
    statements: inProcess && !options.oneStatement ? 'page-then-details' : 'one',
    cut,
    cutCountsKeys: cut !== null && target.catalog.visitorDayKeys,
    details: detailPartitions ? { from: 'visitor-days', partitions: detailPartitions } : { from: 'rows' },
  };
}

/** The cut of a sort by the newest last time or the oldest first time; null for any other sort. */
function cutSort({ column, direction }: VisitorOrderTerm): CutSort | null {
  if (column === 'last_ts' && direction === 'desc') return { column, direction, beyond: '>=' };
  if (column === 'first_ts' && direction === 'asc') return { column, direction, beyond: '<=' };
  return null;
}

export function planTimeline(query: TimelineQuery): TimelinePlan {
  const { range } = query;
  return {
    scope: { domain: query.domain, isDev: query.isDev, range, visitorId: query.visitorId },
    segments: offsetSegments(range.timeZone, range.from, range.to),
    types: query.includeAutoEvents ? ['pageview', 'event', 'revenue', 'auto'] : ['pageview', 'event', 'revenue'],
    page: { offset: query.offset, limit: query.limit },
  };
}

/** journeys/stats and journeys/activity: one visitor over all time, within the domain's days when they are known. */
export function visitorScope(domain: string, visitorId: string, isDev: boolean, days: EventScope['days']): EventScope {
  return { domain, isDev, visitorId, ...(days ? { days } : {}) };
}

/**
 * The offsets of `timeZone` over the domain's days, a day either side (without known days, over every day a store
 * holds: 1970 to 2099), for stats and activity asked in a zone; none for UTC, whose answers are the contract's.
 */
export function visitorSegments(timeZone: string, days: EventScope['days']): OffsetSegment[] | undefined {
  if (timeZone === 'UTC') return undefined;
  const { firstDay, lastDay } = days ?? { firstDay: '1970-01-01', lastDay: '2099-12-31' };
  const day = 86_400_000;
  return offsetSegments(
    timeZone,
    new Date(Date.parse(`${firstDay}T00:00:00Z`) - day),
    new Date(Date.parse(`${lastDay}T00:00:00Z`) + 2 * day),
  );
}
