import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { answer } from '../support/engine-calls.js';
import { EngineRunner, MERGED_STATEMENTS_MAX } from '../../shared/services/engine-runner.js';
import type { QueryEngine, SqlRow } from '../../shared/engines/engine.js';
import { EngineScanLimitError, EngineStatementTooComplexError } from '../../shared/engines/engine-errors.js';
import { planQuery } from '../../shared/query/analytics/plan.js';
import { printAnalyticsStatement } from '../../shared/query/analytics/print.js';
import { printStatementBatch } from '../../shared/query/sql/statement-batch.js';
import { normaliseQueryRequest, queryRange, sharedScans } from '../../shared/services/query.js';
import { queryRequestSchema } from '../../shared/requests/query.js';
import { QUERY_BATCH_MAX } from '../../shared/requests/query-batch-bounds.js';

// POST /v1/query/batch (extension) over DuckDB through HTTP: each answer is the one POST /v1/query gives alone;
// the batch is refused whole where any query would be, or where its queries name different domains; it counts
// its queries against the month's usage. The statement merge Athena runs (shared/query/sql/statement-batch.ts)
// is run here on DuckDB too, split back and compared with each statement alone; on Trino the differential suite
// (test/engines/trino-differential.test.ts) sends its seeded queries as batches.

const domain = 'journeys.test';
let api: TestApi;
let token: string;

const bodies: Record<string, unknown>[] = [
  { metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'] },
  { metrics: ['visitors', 'pageviews'], dimensions: ['page'], limit: 3 },
  { metrics: ['visitors'], dimensions: ['page'], limit: 3, offset: 3 },
  { metrics: ['visitors', 'visits'], dimensions: ['date'], timezone: 'America/New_York' },
  { metrics: ['pageviews'], dimensions: ['referrer', 'country'], sort: { field: 'referrer', order: 'asc' } },
  { metrics: ['visitors', 'revenue'], dimensions: ['country'], include_revenue: true },
  { metrics: ['visitors'], dimensions: ['browser'], filters: [['page', 'contains', 'p']] },
  { metrics: ['visitors'], dimensions: ['entry_page'], date_range: 'all' },
  { metrics: ['visitors', 'pageviews'], date_range: 'all' },
].map((body) => ({ domain, date_range: JOURNEYS_RANGE, ...body }));

beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(journeyEvents);
  token = (await api.createKey({ type: 'personal', domains: [domain, 'other.test'] })).token;
});
afterAll(async () => api?.close());

/** Runs `work` with the answer cache off, so every query reaches the engine. */
async function withoutCache(work: () => Promise<void>): Promise<void> {
  process.env.ANALYTICS_ANSWER_CACHE = 'off';
  try {
    await work();
  } finally {
    delete process.env.ANALYTICS_ANSWER_CACHE;
  }
}

const batch = (queries: unknown[], key = token) =>
  api.request('POST', '/v1/query/batch', { token: key, body: { queries } });

describe('POST /v1/query/batch', () => {
  it('answers each query as POST /v1/query answers it alone, in order', async () => {
    const alone: unknown[] = [];
    for (const body of bodies) {
      const res = await api.request('POST', '/v1/query', { token, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      alone.push(answer(res.body));
    }
    expect(alone.filter((a) => (a as { data: unknown[] }).data.length > 1).length).toBeGreaterThan(4);
    await withoutCache(async () => {
      const res = await batch(bodies);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.results.map(answer)).toEqual(alone);
      for (const result of res.body.results) expect(result.meta.query_ms).toBeGreaterThanOrEqual(0);
    });
  });

  it('answers a repeat from the answer cache, starting no statement', async () => {
    const first = await batch(bodies);
    const run = vi.spyOn(api.engine, 'run');
    try {
      const repeat = await batch(bodies);
      expect(run).not.toHaveBeenCalled();
      expect(repeat.body.results.map(answer)).toEqual(first.body.results.map(answer));
    } finally {
      run.mockRestore();
    }
  });

  it('refuses the whole batch, saying why, where a query is invalid or the domains differ', async () => {
    const cases: [unknown, RegExp][] = [
      [[], /at least one query/],
      [Array.from({ length: QUERY_BATCH_MAX + 1 }, () => bodies[0]), new RegExp(`at most ${QUERY_BATCH_MAX}`)],
      [[bodies[0], { ...bodies[1], metrics: ['nope'] }], /queries\.1\.metrics.*must be one of/],
      [[bodies[0], { ...bodies[1], domain: 'other.test' }], /queries\.1\.domain.*same domain/],
      [[bodies[0], { ...bodies[1], extra: 1 }], /queries\.1/],
      // Eleven queries of the default 100 rows: 1,100 rows, past one query's largest page.
      [Array.from({ length: 11 }, () => ({ ...bodies[0], limit: undefined })), /add up to 1100.*at most 1000 rows/],
    ];
    for (const [queries, message] of cases) {
      const res = await batch(queries as unknown[]);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.message).toMatch(message);
    }
    const notAList = await api.request('POST', '/v1/query/batch', { token, body: { queries: bodies[0] } });
    expect(notAList.status).toBe(400);
  });

  it("answers 403 for a domain outside the key's, as POST /v1/query does", async () => {
    const res = await batch([{ ...bodies[0], domain: 'elsewhere.test' }]);
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
  });

  it("counts each query against the domain's month, admitting a batch only where all of it fits", async () => {
    const usageDomain = 'batch-usage.test';
    const { token: limited } = await api.createKey({ domains: [usageDomain], eventLimit: 5 });
    const query = { domain: usageDomain, metrics: ['visitors'], date_range: '7d' };
    expect((await batch([query, query, query], limited)).status).toBe(200); // 3 of 5
    const run = vi.spyOn(api.engine, 'run');
    // 6 of 5: refused whole, nothing counted or run (queries not asked before, so none is in the answer cache).
    const fresh = { ...query, dimensions: ['page'] };
    const over = await batch([fresh, fresh, fresh], limited);
    expect(run).not.toHaveBeenCalled();
    run.mockRestore();
    expect(over.status).toBe(403);
    expect(over.body.error).toBe('usage_limit_exceeded');
    expect((await batch([query, query], limited)).status).toBe(200); // 5 of 5
    expect((await api.request('POST', '/v1/query', { token: limited, body: query })).status).toBe(403);
    expect((await batch([query], limited)).status).toBe(403);
  });
});

describe('the statement merge (shared/query/sql/statement-batch.ts) on DuckDB', () => {
  it('gives each statement the rows, values and order it gives alone', async () => {
    const runner = await EngineRunner.forDomain(domain, api.engine);
    const now = new Date();
    const statements = await Promise.all(
      bodies.map(async (body) => {
        const request = queryRequestSchema.parse(body);
        const range = await queryRange(request, now, () => runner.firstEventAt(domain, false));
        // The plan before the store's shape is read: exact either way.
        const { plan } = planQuery(normaliseQueryRequest(request, domain, range), runner.target.catalog);
        return printAnalyticsStatement(plan, runner.target);
      }),
    );
    const alone: SqlRow[][] = [];
    for (const { query } of statements) alone.push((await api.engine.run(query)).rows);
    const merged = printStatementBatch(statements);
    const split = merged.split((await api.engine.run(merged.query)).rows);
    expect(split).toEqual(alone);
    expect(alone.filter((rows) => rows.length > 2).length).toBeGreaterThan(3);
  });
});

describe('EngineRunner.rowsOfEach where the engine merges statements (as Athena does)', () => {
  const statementsOf = async (runner: EngineRunner) => {
    const now = new Date();
    return Promise.all(
      bodies.map(async (body) => {
        const request = queryRequestSchema.parse(body);
        const range = await queryRange(request, now, () => runner.firstEventAt(domain, false));
        return printAnalyticsStatement(
          planQuery(normaliseQueryRequest(request, domain, range), runner.target.catalog).plan,
          runner.target,
        );
      }),
    );
  };
  /** DuckDB, taking merged statements as Athena takes them; `refuse`: failing every merged one as Trino past its stages. */
  const merging = (
    refuse: boolean | (() => Error),
    refused = (sql: string) => sql.includes('batch_statement'),
  ): QueryEngine => ({
    target: api.engine.target,
    billedPerStatement: true,
    dataVersion: () => api.engine.dataVersion?.(),
    takesStatement: () => true,
    run: async (query) => {
      if (refuse && refused(query.sql)) throw refuse === true ? new EngineStatementTooComplexError() : refuse();
      return api.engine.run(query);
    },
  });

  it('runs the misses as merged statements of at most MERGED_STATEMENTS_MAX, each answer as alone', async () => {
    await withoutCache(async () => {
      const engine = merging(false);
      const runner = await EngineRunner.forDomain(domain, engine);
      const statements = await statementsOf(runner);
      const many = [...statements, ...statements];
      const alone: unknown[] = [];
      for (const { query } of many) alone.push((await api.engine.run(query)).rows);
      const run = vi.spyOn(engine, 'run');
      expect(await runner.rowsOfEach(many)).toEqual(alone);
      expect(run).toHaveBeenCalledTimes(Math.ceil(many.length / MERGED_STATEMENTS_MAX));
    });
  });

  it('runs the queries of a merged statement the engine refuses one by one', async () => {
    await withoutCache(async () => {
      const engine = merging(true);
      const runner = await EngineRunner.forDomain(domain, engine);
      const statements = await statementsOf(runner);
      const alone: unknown[] = [];
      for (const { query } of statements) alone.push((await api.engine.run(query)).rows);
      const run = vi.spyOn(engine, 'run');
      expect(await runner.rowsOfEach(statements)).toEqual(alone);
      expect(run).toHaveBeenCalledTimes(1 + statements.length);
    });
  });

  it("stops merging a domain's queries for a while once a merged statement passed the scan cutoff", async () => {
    await withoutCache(async () => {
      const engine = merging(() => new EngineScanLimitError());
      // The pause is the runner's domain's: another domain's runner over the same statements.
      const runner = await EngineRunner.forDomain('other.test', engine);
      const statements = await statementsOf(runner);
      const run = vi.spyOn(engine, 'run');
      const first = await runner.rowsOfEach(statements);
      expect(run).toHaveBeenCalledTimes(1 + statements.length);
      run.mockClear();
      expect(await runner.rowsOfEach(statements)).toEqual(first);
      expect(run).toHaveBeenCalledTimes(statements.length);
      expect(run.mock.calls.some(([query]) => query.sql.includes('batch_statement'))).toBe(false);
      // A merged statement over too many stages says nothing of the data: the domain goes on merging.
      const complex = merging(true);
      const other = await EngineRunner.forDomain('elsewhere.test', complex);
      const tried = vi.spyOn(complex, 'run');
      await other.rowsOfEach(statements);
      tried.mockClear();
      await other.rowsOfEach(statements);
      expect(tried.mock.calls.filter(([query]) => query.sql.includes('batch_statement'))).toHaveLength(1);
    });
  });

  it('answers the queries of one scope by a shared scan inside the merged statement; refused, each alone', async () => {
    await withoutCache(async () => {
      // The store's relations read as on S3 (marks inexact, no session counts, visitors by id), where cards share.
      const catalog = {
        ...api.engine.target.catalog,
        profile: 'bucket' as const,
        bucketVisitor: 'visitor_id' as const,
        wholeMarksExact: false,
        sessionCounts: null,
        unmarkedFragments: null,
      };
      const cards = [
        { metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'] },
        { metrics: ['visitors', 'bounce_rate'], dimensions: ['referrer'], limit: 3 },
        { metrics: ['visitors'], dimensions: ['country'], sort: { field: 'country', order: 'desc' } },
        { metrics: ['visitors', 'pageviews'], dimensions: ['date'] },
        { metrics: ['visitors'], dimensions: ['event'] },
        { metrics: ['pageviews', 'visits'], dimensions: ['browser', 'os'], limit: 2, offset: 1 },
      ].map((body) => ({ domain, date_range: JOURNEYS_RANGE, ...body }));
      // Refused: the merged statement (its shared scan then runs alone), or every statement answering several.
      const several = (sql: string) => sql.includes('batch_statement') || sql.includes('GROUPING SETS');
      for (const [refuse, calls] of [
        [null, 1],
        [merging(true), 3],
        [merging(true, several), 3 + cards.length - 1],
      ] as const) {
        const engine = { ...(refuse ?? merging(false)), target: { ...api.engine.target, catalog } };
        const runner = await EngineRunner.forDomain(domain, engine);
        const now = new Date();
        const plans = await Promise.all(
          cards.map(async (body) => {
            const request = queryRequestSchema.parse(body);
            const range = await queryRange(request, now, () => runner.firstEventAt(domain, false));
            return planQuery(normaliseQueryRequest(request, domain, range), catalog).plan;
          }),
        );
        const statements = plans.map((plan) => printAnalyticsStatement(plan, runner.target));
        const alone: SqlRow[][] = [];
        for (const { query } of statements) alone.push((await api.engine.run(query)).rows);
        const run = vi.spyOn(engine, 'run');
        expect(await runner.rowsOfEach(statements, sharedScans(plans, runner.target))).toEqual(alone);
        expect(alone.filter((rows) => rows.length > 1).length).toBeGreaterThan(2);
        const [first] = run.mock.calls[0]!;
        // The five cards by attributes, days or nothing in one shared scan, the one by event beside it: two branches.
        expect(first.sql).toContain('GROUPING SETS');
        expect(first.sql.split(' AS batch_statement,').length - 1).toBe(2);
        expect(run).toHaveBeenCalledTimes(calls);
        if (calls === 3) expect(run.mock.calls[1]![0].sql).toContain('GROUPING SETS');
      }
    });
  });

  it('starts no statement for the answers the cache holds, and merges the rest', async () => {
    // A new snapshot: nothing the tests above kept answers this one.
    await api.importEvents([
      { domain: 'other.test', timestamp: '2026-05-05T12:00:00Z', type: 'pageview', visitor_id: 'v', url_path: '/' },
    ]);
    const engine = merging(false);
    const runner = await EngineRunner.forDomain(domain, engine);
    const statements = await statementsOf(runner);
    await runner.rows(statements[0]!.query);
    await runner.rows(statements[1]!.query);
    const run = vi.spyOn(engine, 'run');
    const answers = await runner.rowsOfEach(statements);
    expect(run).toHaveBeenCalledTimes(1);
    expect(run.mock.calls[0]![0].sql.split(' AS batch_statement,').length - 1).toBe(statements.length - 2);
    const again = vi.spyOn(engine, 'run');
    again.mockClear();
    expect(await runner.rowsOfEach(statements)).toEqual(answers);
    expect(again).not.toHaveBeenCalled();
  });
});
