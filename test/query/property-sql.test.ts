import { TrinoSQL } from 'dt-sql-parser';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPlaceholders, inlineParameters, trinoLiteral } from '../../shared/engines/athena-literals.js';
import type { SqlParam, SqlQuery } from '../../shared/query/sql/sql.js';
import { queryRequestSchema, type AnalyticsQuery } from '../../shared/requests/query.js';
import { printEventList, printEventPropertyKeys, printEventPropertyValues } from '../../shared/query/events/print.js';
import { athenaTarget, localTarget, type SqlTarget } from '../../shared/query/sql/target.js';
import { printVisitorCount, printVisitorList } from '../../shared/query/journeys/print-list.js';
import { planTimeline, planVisitorList, visitorScope } from '../../shared/query/journeys/plan.js';
import { boundsOf, timelineRequestSchema, visitorListRequestSchema } from '../../shared/requests/journeys.js';
import {
  printTimeline,
  printVisitorActivity,
  printVisitorExists,
  printVisitorStats,
} from '../../shared/query/journeys/print-visitor.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import { planAnalyticsQuery } from '../../shared/query/analytics/plan.js';
import { normaliseQueryRequest, queryRange } from '../../shared/services/query.js';
import { str } from '../../shared/query/sql/sql.js';
import { rangeOfDates, resolveDateRange } from '../../shared/time/date-range.js';
import { shopEvents } from '../fixtures/shop-events.js';
import {
  day,
  filterText,
  hostileStrings,
  validDateRange,
  validQueryBody,
  validTimelineBody,
  validVisitorListBody,
} from '../support/request-arbitraries.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Generated requests, valid per the schemas (random metrics, dimensions, filters with any text, sort, all IANA
// zones, ranges up to the 1970..2099 bounds), are normalised as the services do, planned and printed:
// - the DuckDB text runs on real Parquet (the fixture site);
// - the Athena text passes Trino's grammar (dt-sql-parser) with zero errors, has one `?` per parameter, and
//   with every parameter written in as its Trino literal it still parses, with each literal lexed as exactly
//   the tokens of that literal alone and every other token unchanged: no value can end a string, open a
//   comment or start a second statement. (Trino's grammar alone accepts `SELECT 1; DROP TABLE x`, so the token
//   comparison is the part that proves it.)

const SEED = 42;
const NOW = new Date('2026-03-04T12:00:00Z');
const FIRST_EVENT = new Date('2026-02-27T09:00:00Z');
const athena = athenaTarget('analytics', 'events');
const trino = new TrinoSQL();

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
});
afterAll(() => api?.close());

// ---- the Athena checks ----------------------------------------------------------------------------------------

const WHITE_SPACE = trino.getAllTokens(' ')[0]!.type;
const lex = (text: string) =>
  trino
    .getAllTokens(text)
    .filter((t) => t.type !== WHITE_SPACE)
    .map((t) => `${t.type}:${t.text}`);

/** The statement with every `?` replaced by its parameter's Trino literal (what Athena executes). */
function inlined(
  { sql, params }: SqlQuery,
  literal: (p: SqlParam) => string = trinoLiteral,
): { text: string; literals: string[] } {
  const literals = params.map(literal);
  let text = '';
  let from = 0;
  findPlaceholders(sql).forEach((at, i) => {
    text += sql.slice(from, at) + literals[i];
    from = at + 1;
  });
  return { text: text + sql.slice(from), literals };
}

function expectSafeAthenaSql(query: SqlQuery, literal?: (p: SqlParam) => string): void {
  const context = query.sql.slice(0, 2000);
  expect(findPlaceholders(query.sql).length, context).toBe(query.params.length);
  expect(trino.validate(query.sql), context).toEqual([]);

  const { text, literals } = inlined(query, literal);
  expect(trino.validate(text), context).toEqual([]);
  expect(trino.splitSQLByStatement(text)?.length).toBe(1);
  // Token by token: the printed text with each `?` expanded to its literal's own tokens.
  const want: string[] = [];
  let next = 0;
  for (const token of lex(query.sql)) {
    if (token.endsWith(':?')) want.push(...lex(literals[next++]!));
    else want.push(token);
  }
  expect(lex(text)).toEqual(want);

  // What the Athena engine sends: every value inlined, no placeholder left.
  const sent = inlineParameters(query.sql, query.params);
  expect(trino.validate(sent), context).toEqual([]);
  expect(findPlaceholders(sent)).toEqual([]);
}

async function expectDuckDbRuns(query: SqlQuery, maxRows?: number): Promise<void> {
  const { rows } = await api.engine.run(query);
  if (maxRows !== undefined) expect(rows.length).toBeLessThanOrEqual(maxRows);
}

// ---- generated requests -------------------------------------------------------------------------------------

/** Mostly ranges near the data; some spanning decades, so many DST segments are printed. */
const dateRange = fc.oneof(
  { weight: 6, arbitrary: validDateRange },
  {
    weight: 1,
    arbitrary: fc
      .tuple(day('1970-01-01', '2099-12-31'), day('1970-01-01', '2099-12-31'))
      .map(([a, b]) => (a <= b ? [a, b] : [b, a])),
  },
);

async function normalisedQuery(body: Record<string, unknown>): Promise<AnalyticsQuery> {
  // What services/query.ts does before planning, with a fixed clock and first event.
  const parsed = queryRequestSchema.safeParse(body);
  expect(parsed.error?.issues ?? [], JSON.stringify(body)).toEqual([]);
  const request = parsed.data!;
  const range = await queryRange(request, NOW, async () => FIRST_EVENT);
  return normaliseQueryRequest(request, 'shop.test', range);
}

describe('generated /v1/query plans', () => {
  it('print Athena SQL that Trino parses, with every value one literal token, and DuckDB SQL that runs (150 runs)', async () => {
    const bodies = validQueryBody().chain((body) => dateRange.map((date_range) => ({ ...body, date_range })));
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const query = await normalisedQuery(body);
        expectSafeAthenaSql(printAnalyticsQuery(planAnalyticsQuery(query, athena.catalog), athena));
        await expectDuckDbRuns(
          printAnalyticsQuery(planAnalyticsQuery(query, localTarget.catalog), localTarget),
          query.limit + 1,
        );
      }),
      { seed: SEED, numRuns: 150 },
    );
  });
});

describe('generated journeys plans', () => {
  it('visitor lists: Trino grammar, literal tokens, DuckDB runs, for the page and the count (40 runs)', async () => {
    const bodies = validVisitorListBody('shop.test').chain((body) =>
      dateRange.map((date_range) => ({ ...body, date_range })),
    );
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const request = visitorListRequestSchema.parse(body);
        const timeZone = request.timezone ?? 'UTC';
        const isDev = request.is_dev ?? false;
        const query = {
          domain: 'shop.test',
          isDev,
          range: await resolveDateRange(request.date_range ?? '30d', timeZone, NOW, async () => FIRST_EVENT),
          limit: request.limit ?? 50,
          offset: request.offset ?? 0,
          filters: request.filters ?? [],
          bounds: boundsOf(request),
          hasRevenue: request.has_revenue ?? false,
          firstPurchase: request.first_purchase ?? false,
          sort: { field: request.sort_by ?? 'last_seen', order: request.sort_order ?? 'desc' },
        };
        for (const print of [printVisitorList, printVisitorCount]) {
          expectSafeAthenaSql(print(planVisitorList(query, athena), athena));
          await expectDuckDbRuns(print(planVisitorList(query, localTarget), localTarget));
        }
      }),
      { seed: SEED, numRuns: 40 },
    );
  });

  it('one visitor (timeline, stats, activity, existence) with any visitor id: same checks (40 runs)', async () => {
    const visitorId = fc
      .oneof(fc.constantFrom('v1', 'v3'), filterText, fc.constantFrom(...hostileStrings))
      .filter((v) => v.length <= 256 && !v.includes('\u0000') && !/\p{Surrogate}/u.test(v));
    const bodies = fc
      .tuple(validTimelineBody('shop.test', ['v1']), visitorId)
      .map(([body, visitor_id]) => ({ ...body, visitor_id }));
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const request = timelineRequestSchema.parse(body);
        const timeZone = request.timezone ?? 'UTC';
        const isDev = request.is_dev ?? false;
        const plan = planTimeline({
          domain: 'shop.test',
          isDev,
          visitorId: request.visitor_id,
          range: await resolveDateRange(request.date_range ?? '30d', timeZone, NOW, async () => FIRST_EVENT),
          includeAutoEvents: request.include_auto_events ?? false,
          limit: request.limit ?? 100,
          offset: request.offset ?? 0,
        });
        const scope = visitorScope('shop.test', request.visitor_id, isDev, undefined);
        const queries = (target: SqlTarget) => [
          printTimeline(plan, target),
          printVisitorExists(scope, target),
          printVisitorStats(scope, target),
          printVisitorActivity(scope, target),
        ];
        for (const query of queries(athena)) expectSafeAthenaSql(query);
        for (const query of queries(localTarget)) await expectDuckDbRuns(query);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });
});

describe('generated custom-event queries', () => {
  it('any event name and property key: same checks (50 runs)', async () => {
    const name = fc.oneof(fc.constantFrom('signup', 'download'), filterText);
    const key = fc.oneof(fc.constantFrom('plan', 'file', '$.plan', 'plan"]', 'a.b', '$[0]'), filterText);
    await fc.assert(
      fc.asyncProperty(
        name,
        key,
        fc.integer({ min: 1, max: 1000 }),
        fc.boolean(),
        async (event, property, limit, revenue) => {
          const scope = { domain: 'shop.test', isDev: false, range: rangeOfDates('2026-03-01', '2026-03-03', 'UTC') };
          const queries = (target: SqlTarget) => [
            printEventList(scope, limit, target),
            printEventPropertyKeys(scope, event, limit, target),
            printEventPropertyValues(scope, event, property, limit, revenue, target),
          ];
          for (const query of queries(athena)) expectSafeAthenaSql(query);
          for (const query of queries(localTarget)) await expectDuckDbRuns(query, limit);
        },
      ),
      { seed: SEED, numRuns: 50 },
    );
  });
});

describe('the token check itself', () => {
  const hostile: SqlQuery = {
    sql: 'SELECT count(*) FROM events WHERE url_path = ? AND domain = ?',
    params: [str("x' OR '1'='1"), str("a'; DROP TABLE events; --")],
  };
  const naive = (p: SqlParam) => `'${String(p.value)}'`;

  it('passes audited literals of hostile values', () => {
    expectSafeAthenaSql(hostile);
  });

  it('fails the string-template SQL it guards against, though the grammar alone accepts some of it', () => {
    expect(
      trino.validate(inlined({ ...hostile, params: hostile.params.slice(0, 1) }, naive).text.replace('?', "'d'")),
    ).toEqual([]);
    expect(() => expectSafeAthenaSql(hostile, naive)).toThrow();
  });
});
