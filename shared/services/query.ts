import { QUERY_DEFAULTS, REALTIME_RANGE, type AnalyticsQuery, type QueryRequest } from '../requests/query.js';
import { printAnalyticsStatement } from '../query/analytics/print.js';
import type { BatchedStatement } from '../query/sql/statement-batch.js';
import type { SqlRow } from '../engines/engine.js';
import { futureRangeNote, lastMinutes, resolveDateRange, type ResolvedRange } from '../time/date-range.js';
import { EngineRunner, type StatementSharing } from './engine-runner.js';
import { planQuery, type QueryPlan } from '../query/analytics/plan.js';
import { sharedScanGroups } from '../query/analytics/shared-scan.js';
import { printSharedScan } from '../query/analytics/print-shared-scan.js';
import { storeShapeFor } from './store-shape.js';
import { withoutRepeats } from '../requests/fields.js';
import type { SqlTarget } from '../query/sql/target.js';

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
  const prepared = await prepareQuery(runner, request, domain, now, () => runner.firstEventAt(domain, false));
  return answerOf(prepared, await runner.rows(prepared.statement.query), runner, now);
}

/**
 * POST /v1/query/batch (extension): the queries of one domain, each answered as POST /v1/query answers it, their
 * statements run together (EngineRunner.rowsOfEach: merged on Athena, where queries of one scope share a statement
 * that reads their relations once: shared-scan.ts). `meta.query_ms` and `bytes_scanned` of each
 * answer are the batch's: the queries shared their statements.
 */
export async function runAnalyticsQueryBatch(requests: readonly QueryRequest[], domain: string, now = new Date()) {
  const runner = await EngineRunner.forDomain(domain);
  // Ranges of all time need the domain's first event: read once for the batch.
  let firstEvent: Promise<Date | null> | undefined;
  const firstEventAt = () => (firstEvent ??= runner.firstEventAt(domain, false));
  // One after another: a plan may read the store's shape first, and a batch runs one statement at a time.
  const prepared: PreparedQuery[] = [];
  for (const request of requests) prepared.push(await prepareQuery(runner, request, domain, now, firstEventAt));
  const statements = prepared.map(({ statement }) => statement);
  const rows = await runner.rowsOfEach(
    statements,
    sharedScans(
      prepared.map(({ plan }) => plan),
      runner.target,
    ),
  );
  return { results: prepared.map((p, i) => answerOf(p, rows[i]!, runner, now)) };
}

/** The queries of `plans` one statement may answer together, and that statement (shared-scan.ts). */
export function sharedScans(plans: readonly QueryPlan[], target: SqlTarget): StatementSharing {
  return {
    groups: (indexes) => sharedScanGroups(indexes.map((i) => plans[i]!)).map((group) => group.map((n) => indexes[n]!)),
    print: (members) =>
      printSharedScan(
        members.map((i) => plans[i]!),
        target,
      ),
  };
}

interface PreparedQuery {
  request: QueryRequest;
  query: AnalyticsQuery;
  plan: QueryPlan;
  statement: BatchedStatement;
}

/** The request normalised over its range, planned (with the store's shape where the plan asks) and printed. */
async function prepareQuery(
  runner: EngineRunner,
  request: QueryRequest,
  domain: string,
  now: Date,
  firstEventAt: () => Promise<Date | null>,
): Promise<PreparedQuery> {
  const range = await queryRange(request, now, firstEventAt);
  const query = normaliseQueryRequest(request, domain, range);
  const planning = planQuery(query, runner.target.catalog);
  const plan = planning.question
    ? planning.answered(await storeShapeFor(runner, domain, planning.question))
    : planning.plan;
  return { request, query, plan, statement: printAnalyticsStatement(plan, runner.target) };
}

/** The reply to one query: its page of rows, the range and figures in `meta`, the query as understood. */
function answerOf({ request, query }: PreparedQuery, rows: readonly SqlRow[], runner: EngineRunner, now: Date) {
  const { range, domain } = query;
  const timeZone = request.timezone ?? 'UTC';
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
