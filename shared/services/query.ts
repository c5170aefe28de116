import { QUERY_DEFAULTS, REALTIME_RANGE, type AnalyticsQuery, type QueryRequest } from '../requests/query.js';
import { printAnalyticsQuery } from '../query/analytics/print.js';
import { futureRangeNote, lastMinutes, resolveDateRange, type ResolvedRange } from '../time/date-range.js';
import { EngineRunner } from './engine-runner.js';
import { planQuery } from '../query/analytics/plan.js';
import { storeShapeFor } from './store-shape.js';
import { withoutRepeats } from '../requests/fields.js';

/** The request with every default filled in, over a resolved range: what the planner works from. */
export function normaliseQueryRequest(request: QueryRequest, domain: string, range: ResolvedRange): AnalyticsQuery {
  return {
    domain,
    metrics: request.metrics ?? QUERY_DEFAULTS.metrics,
    dimensions: request.dimensions ?? [],
    filters: withoutRepeats(request.filters ?? []),
    range,
    timeZone: range.timeZone,
    sort: request.sort ? { field: request.sort.field, order: request.sort.order ?? 'desc' } : null,
    limit: request.limit ?? QUERY_DEFAULTS.limit,
    offset: request.offset ?? 0,
  };
}

/** The range a query names: a preset or dates (date-range.ts), or the last 30 minutes (the `30m` extension). */
export async function queryRange(
  request: QueryRequest,
  now: Date,
  firstEventAt: () => Promise<Date | null>,
): Promise<ResolvedRange> {
  const input = request.date_range ?? QUERY_DEFAULTS.dateRange;
  const timeZone = request.timezone ?? 'UTC';
  return input === REALTIME_RANGE
    ? lastMinutes(30, timeZone, now)
    : resolveDateRange(input, timeZone, now, firstEventAt);
}

/** POST /v1/query: normalise, plan (reading the store's shape where the plan asks for it), print, run, shape. */
export async function runAnalyticsQuery(request: QueryRequest, domain: string, now = new Date()) {
  const runner = await EngineRunner.forDomain(domain);
  const timeZone = request.timezone ?? 'UTC';
  const range = await queryRange(request, now, () => runner.firstEventAt(domain, false));
  const query = normaliseQueryRequest(request, domain, range);
  const planning = planQuery(query, runner.target.catalog);
  const plan = planning.question
    ? planning.answered(await storeShapeFor(runner, domain, planning.question))
    : planning.plan;
  const rows = await runner.rows(printAnalyticsQuery(plan, runner.target));
  const page = rows.slice(0, query.limit);
  return {
    data: page.map((row) => ({
      dimensions: Object.fromEntries(query.dimensions.map((d, i) => [d, String(row[`d${i}`])])),
      metrics: Object.fromEntries(query.metrics.map((m) => [m, Number(row[m] ?? 0)])),
    })),
    meta: {
      domain,
      date_range: [range.start, range.end],
      timezone: timeZone,
      query_ms: runner.queryMs,
      ...bytes(runner),
      ...futureRangeNote(range, now),
    },
    pagination: { limit: query.limit, offset: query.offset, has_more: rows.length > query.limit },
    query: {
      metrics: query.metrics,
      dimensions: query.dimensions,
      date_range: [range.start, range.end],
      filters: query.filters.map((f) => [f.field, f.operator, f.value]),
      sort: query.sort,
      timezone: timeZone,
    },
  };
}

export function bytes(runner: EngineRunner): { bytes_scanned?: number } {
  return runner.bytesScanned === undefined ? {} : { bytes_scanned: runner.bytesScanned };
}
