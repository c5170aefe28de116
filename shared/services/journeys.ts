import { withoutRepeats } from '../requests/fields.js';
import type { SqlRow, SqlValue } from '../engines/engine.js';
import { NotFoundError } from '../errors.js';
import type { EventScope } from '../query/scope/event-scope.js';
import { printListedDetails, printVisitorCount, printVisitorList } from '../query/journeys/print-list.js';
import {
  planTimeline,
  planVisitorList,
  visitorScope,
  visitorSegments,
  type VisitorListPlan,
} from '../query/journeys/plan.js';
import type { SqlQuery } from '../query/sql/sql.js';
import type { SqlTarget } from '../query/sql/target.js';
import { readDomainDays } from '../store/domain-days-repo.js';
import {
  boundsOf,
  JOURNEYS_DEFAULTS,
  type TimelineRequest,
  type VisitorListRequest,
  type VisitorRequest,
} from '../requests/journeys.js';
import {
  printTimeline,
  printVisitorActivity,
  printVisitorExists,
  printVisitorStats,
} from '../query/journeys/print-visitor.js';
import { futureRangeNote, resolveDateRange, type DateRangeInput, type ResolvedRange } from '../time/date-range.js';
import { EngineRunner } from './engine-runner.js';
import { bytes } from './query.js';

// The journeys endpoints: normalise, plan, print for the engine's dialect, run, shape. Shaping only renames
// and picks fields; every count and aggregate comes from the engine.

interface RangedRequest {
  date_range?: DateRangeInput;
  timezone?: string;
  is_dev?: boolean;
  limit?: number;
  offset?: number;
}

/** The defaults and the resolved range shared by the two ranged, paged endpoints (list and timeline). */
async function pageOf(runner: EngineRunner, request: RangedRequest, domain: string, defaultLimit: number, now: Date) {
  const timeZone = request.timezone ?? 'UTC';
  const isDev = request.is_dev ?? false;
  const range = await resolveDateRange(request.date_range ?? JOURNEYS_DEFAULTS.dateRange, timeZone, now, () =>
    runner.firstEventAt(domain, isDev),
  );
  return { domain, isDev, range, limit: request.limit ?? defaultLimit, offset: request.offset ?? 0 };
}

/** The journeys form of a range: local day bounds as timestamps. */
function shownRange(range: ResolvedRange): [string, string] {
  return [`${range.start} 00:00:00`, `${range.end} 23:59:59`];
}

async function requireVisitor(runner: EngineRunner, scope: EventScope): Promise<void> {
  const found = await runner.rows(printVisitorExists(scope, runner.target));
  if (found.length === 0) throw new NotFoundError('Visitor not found');
}

export async function listVisitors(request: VisitorListRequest, domain: string, now = new Date()) {
  const runner = await EngineRunner.forDomain(domain);
  const page = await pageOf(runner, request, domain, JOURNEYS_DEFAULTS.listLimit, now);
  const { range, limit, offset } = page;
  const plan = planVisitorList(
    {
      ...page,
      filters: withoutRepeats(request.filters ?? []),
      bounds: boundsOf(request),
      hasRevenue: request.has_revenue ?? false,
      firstPurchase: request.first_purchase ?? false,
      ...(request.first_purchase ? { days: await readDomainDays(domain) } : {}),
      sort: { field: request.sort_by ?? 'last_seen', order: request.sort_order ?? 'desc' },
    },
    runner.target,
  );
  const rows = await listedVisitors((query) => runner.rows(query), plan, runner.target);
  // The window total rides on the page's rows; past the last page there are none, so count separately.
  const total = rows.length
    ? Number(rows[0]!.total)
    : offset > 0
      ? Number((await runner.rows(printVisitorCount(plan, runner.target)))[0]?.total ?? 0)
      : 0;
  return {
    data: rows.slice(0, limit).map(visitorItem),
    meta: {
      domain,
      date_range: shownRange(range),
      timezone: range.timeZone,
      query_ms: runner.queryMs,
      ...bytes(runner),
      ...futureRangeNote(range, now),
    },
    pagination: { limit, offset, has_more: rows.length > limit, total },
  };
}

/**
 * A list page's rows (its limit and one more, to tell whether more follow) with their details, in the page's order:
 * one statement, or the page and then its visitors' details (the plan's `statements`). Between those two reads
 * an import may publish: its rows then count in the details of visitors it extends, never in the page's order.
 */
export async function listedVisitors(
  run: (query: SqlQuery) => Promise<SqlRow[]>,
  plan: VisitorListPlan,
  target: SqlTarget,
): Promise<SqlRow[]> {
  const rows = await run(printVisitorList(plan, target));
  if (plan.statements === 'one' || rows.length === 0) return rows;
  const days = rows[0]!.listed_days === null ? null : String(rows[0]!.listed_days).split(',');
  const details = await run(
    printListedDetails(
      plan,
      rows.map((row) => String(row.visitor_id)),
      days,
      target,
    ),
  );
  const byVisitor = new Map(details.map((row) => [String(row.visitor_id), row]));
  return rows.map((row) => {
    // A listed visitor has rows in the range, and a store only ever gains rows.
    const visitor = byVisitor.get(String(row.visitor_id));
    if (!visitor) throw new Error('a listed visitor has no rows in its range');
    return { ...visitor, total: row.total ?? null };
  });
}

function visitorItem(row: SqlRow) {
  return {
    visitor_id: String(row.visitor_id),
    country: text(row.country),
    browser: text(row.browser),
    os: text(row.os),
    device: text(row.device),
    pageview_count: Number(row.pageview_count),
    session_count: Number(row.session_count),
    event_count: Number(row.event_count),
    total_revenue_cents: Number(row.total_revenue_cents),
    first_seen: String(row.first_seen),
    last_seen: String(row.last_seen),
    first_referrer: text(row.first_referrer),
    entry_page: text(row.entry_page),
    latest_revenue_date: text(row.latest_revenue_date),
    revenue_event_count: Number(row.revenue_event_count),
  };
}

export async function visitorTimeline(request: TimelineRequest, domain: string, now = new Date()) {
  const runner = await EngineRunner.forDomain(domain);
  const page = await pageOf(runner, request, domain, JOURNEYS_DEFAULTS.timelineLimit, now);
  const { range, limit, offset } = page;
  const plan = planTimeline({
    ...page,
    visitorId: request.visitor_id,
    includeAutoEvents: request.include_auto_events ?? false,
  });
  const rows = await runner.rows(printTimeline(plan, runner.target));
  if (rows.length === 0) await requireVisitor(runner, plan.scope);
  return {
    data: rows.slice(0, limit).map(timelineItem),
    meta: {
      domain,
      visitor_id: request.visitor_id,
      date_range: shownRange(range),
      timezone: range.timeZone,
      query_ms: runner.queryMs,
      ...bytes(runner),
    },
    pagination: { limit, offset, has_more: rows.length > limit },
  };
}

/** The fields per item type (docs/API.md, timeline); entry pageviews add the session's attribution, scroll_depth only when known. */
function timelineItem(row: SqlRow) {
  const common = { timestamp: String(row.shown_ts), type: String(row.type) };
  switch (row.type) {
    case 'pageview': {
      const item = {
        ...common,
        session_id: text(row.session_id) ?? '',
        url_path: text(row.url_path) ?? '',
        is_entry_page: Number(row.is_entry_page),
      };
      if (item.is_entry_page !== 1) return item;
      return {
        ...item,
        referrer: text(row.referrer),
        utm_source: text(row.utm_source),
        ...(row.scroll_depth === null ? {} : { scroll_depth: Number(row.scroll_depth) }),
        country: text(row.country),
        browser: text(row.browser),
        os: text(row.os),
        device: text(row.device),
      };
    }
    case 'revenue':
      return {
        ...common,
        session_id: '',
        transaction_id: text(row.transaction_id),
        amount_cents: Number(row.amount_cents),
        currency: text(row.currency),
        revenue_event: text(row.revenue_event),
      };
    default:
      // `event` and `auto` rows read alike.
      return {
        ...common,
        session_id: '',
        event_name: text(row.event_name),
        event_properties: text(row.event_properties) ?? '{}',
      };
  }
}

export async function visitorStats(request: VisitorRequest, domain: string) {
  const runner = await EngineRunner.forDomain(domain);
  const days = await readDomainDays(domain);
  const scope = visitorScope(domain, request.visitor_id, request.is_dev ?? false, days);
  const segments = visitorSegments(request.timezone ?? 'UTC', days);
  const [row] = await runner.rows(printVisitorStats(scope, runner.target, segments));
  if (!row || Number(row.row_count) === 0) throw new NotFoundError('Visitor not found');
  const texts = [
    'country',
    'region',
    'city',
    'browser',
    'os',
    'device',
    'entry_page',
    'source',
    'utm_source',
    'utm_medium',
    'utm_campaign',
  ];
  return {
    data: {
      visitor_id: request.visitor_id,
      first_seen: String(row.first_seen),
      last_seen: String(row.last_seen),
      total_sessions: Number(row.total_sessions),
      total_pageviews: Number(row.total_pageviews),
      total_events: Number(row.total_events),
      total_revenue_cents: Number(row.total_revenue_cents),
      avg_scroll_depth: Number(row.avg_scroll_depth),
      avg_session_duration_seconds: Number(row.avg_session_duration_seconds),
      ...Object.fromEntries(texts.map((name) => [name, text(row[name])])),
    },
    meta: { domain, visitor_id: request.visitor_id, query_ms: runner.queryMs, ...bytes(runner) },
  };
}

export async function visitorActivity(request: VisitorRequest, domain: string) {
  const runner = await EngineRunner.forDomain(domain);
  const days = await readDomainDays(domain);
  const scope = visitorScope(domain, request.visitor_id, request.is_dev ?? false, days);
  const segments = visitorSegments(request.timezone ?? 'UTC', days);
  const rows = await runner.rows(printVisitorActivity(scope, runner.target, segments));
  if (rows.length === 0) await requireVisitor(runner, scope);
  return {
    data: rows.map((r) => ({
      day_of_week: Number(r.day_of_week),
      hour_of_day: Number(r.hour_of_day),
      pageviews: Number(r.pageviews),
      unique_visitors: Number(r.unique_visitors),
    })),
    meta: { domain, visitor_id: request.visitor_id, query_ms: runner.queryMs, ...bytes(runner) },
  };
}

function text(value: SqlValue | undefined): string | null {
  return value === null || value === undefined ? null : String(value);
}
