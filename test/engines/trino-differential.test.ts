import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { installEngine } from '../../shared/engines/registry.js';
import { domain as generatedDomain } from '../support/generated-sessions.js';
import { answer, engineCallEvents, engineCalls, sendCall, SHOP, type Call } from '../support/engine-calls.js';
import { QUERY_BATCH_MAX } from '../../shared/requests/query-batch-bounds.js';
import { rotatingToken } from '../support/rotating-token.js';
import { largePayments } from '../support/large-payments.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';
import { forgetLayout } from '../support/forget-layout.js';
import { EngineRunner, MERGED_STATEMENTS_MAX } from '../../shared/services/engine-runner.js';

// The cloud query path against the local one: every request below is answered twice by the same local API over
// the same imported store, once by DuckDB and once by the Lambdas' Athena engine through the real Athena SDK, the
// Athena emulator and a real Trino reading the store as Athena reads the bucket (tables from the stack's Glue
// definitions, partition projection, ZSTD Parquet). Status and body must be identical but for `query_ms` and
// `bytes_scanned`. The requests are seeded and random: every metric, dimension, filter field and operator, time
// zones with DST and half-hour offsets, presets and explicit ranges, sorts, pages, the journeys filters and bounds,
// and the custom-event endpoints, on two domains (so result reuse, which matches on query text, is exercised
// across domains).
//
// It needs Java 24+ for Trino; without one it is skipped with one line, unless TRINO_REQUIRED=1 (as in .ci/run),
// which turns the skip into a failure.

const trino = trinoAvailable('Trino differential suite');

const CALLS = 320;
const calls = engineCalls(CALLS, 20261125);

describe.skipIf(!trino)('the Athena engine on Trino answers exactly as DuckDB does', () => {
  let api: TestApi;
  let tokens: Record<string, (uses?: number) => Promise<string>>;

  beforeAll(async () => {
    // The files are written as the S3 path writes them.
    process.env.ANALYTICS_PARQUET_COMPRESSION = 'zstd';
    api = await startTestApi({ engine: 'trino' });
    expect((await api.importEvents(engineCallEvents.generated)).rejected).toEqual([]);
    expect((await api.importEvents(engineCallEvents.shop)).rejected).toEqual([]);
    // One domain as a store written before the current layout reads it (docs/STORAGE.md, "Upgrading the S3 store"),
    // the other as every new domain: both profiles of the bucket answer as DuckDB does.
    await forgetLayout(SHOP);
    installEngine(api.trino!.engine);
    expect((await EngineRunner.forDomain(SHOP)).target.catalog.profile).toBe('bucketBeforeUpgrade');
    expect((await EngineRunner.forDomain(generatedDomain)).target.catalog.profile).toBe('bucket');
    tokens = Object.fromEntries(
      [generatedDomain, SHOP].map((d) => [
        d,
        rotatingToken(api, { owner: 'differential', domains: [d], scopes: ['analytics:read'] }),
      ]),
    );
  }, 300_000);
  afterAll(async () => {
    delete process.env.ANALYTICS_PARQUET_COMPRESSION;
    await api?.close();
  });

  it(`${CALLS} seeded requests over every endpoint: identical status and body`, { timeout: 1_500_000 }, async () => {
    const statuses = new Map<string, number>();
    let rowsSeen = 0;
    let withRows = 0;
    let bytesReported = 0;
    for (const [i, call] of calls.entries()) {
      const send = async () => sendCall(api, call, await tokens[call.domain]!());
      installEngine(api.engine);
      const { bytes: localBytes, ...local } = await send();
      installEngine(api.trino!.engine);
      const { bytes: cloudBytes, ...cloud } = await send();
      const context = `call ${i}: ${call.method} ${call.path} ${JSON.stringify(call.body ?? call.query)}`;
      expect(cloud, context).toEqual(local);
      // Only the Athena engine reports bytes scanned: answers with them came from Trino.
      expect(localBytes, context).toBe(0);
      bytesReported += cloudBytes;
      const key = `${call.path.replace(/\/(signup|download|exit_link|nothing)\/properties.*/, '/{name}/properties...')} ${local.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      const data = (local.body as { data?: unknown[] }).data;
      if (Array.isArray(data)) rowsSeen += data.length;
      if (Array.isArray(data) && data.length > 0) withRows += 1;
    }
    console.info(
      `trino differential: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${rowsSeen} rows compared, ${withRows} answers with rows, ${bytesReported} bytes scanned by Trino`,
    );
    // The requests must reach the engines' answers, not mostly validation errors or empty results, and Trino must
    // have read files.
    const ok = [...statuses].filter(([key]) => key.endsWith(' 200')).reduce((sum, [, n]) => sum + n, 0);
    expect(ok).toBeGreaterThan(CALLS * 0.8);
    expect(withRows).toBeGreaterThan(CALLS / 3);
    expect(bytesReported).toBeGreaterThan(0);
  });

  it(
    'the seeded queries sent as batches: merged statements on Trino, every answer as DuckDB gives it alone',
    { timeout: 600_000 },
    async () => {
      // Without the answer cache, so every query of a batch reaches the merged statement.
      process.env.ANALYTICS_ANSWER_CACHE = 'off';
      const run = vi.spyOn(api.trino!.engine, 'run');
      let batches = 0;
      let answers = 0;
      try {
        for (const domain of [generatedDomain, SHOP]) {
          const alone: { body: Record<string, unknown>; answer: unknown }[] = [];
          installEngine(api.engine);
          for (const call of calls.filter((c) => c.path === '/v1/query' && c.domain === domain)) {
            const { status, body } = await sendCall(api, call, await tokens[domain]!());
            if (status === 200) alone.push({ body: call.body!, answer: body });
          }
          installEngine(api.trino!.engine);
          for (let start = 0; start < alone.length; start += QUERY_BATCH_MAX) {
            const chunk = alone.slice(start, start + QUERY_BATCH_MAX);
            run.mockClear();
            const res = await api.request('POST', '/v1/query/batch', {
              token: await tokens[domain]!(),
              body: { queries: chunk.map(({ body }) => body) },
            });
            const context = `batch ${start / QUERY_BATCH_MAX} of ${domain}`;
            expect(res.status, `${context}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(200);
            expect(res.body.results.map(answer), context).toEqual(chunk.map((c) => c.answer));
            // Besides the reads a plan may ask first (the first event, the store's shape), the batch's statements:
            // merged, at most MERGED_STATEMENTS_MAX to a statement (queries of a shared scan count as one).
            const merged = run.mock.calls.filter(([query]) => query.sql.includes('batch_statement'));
            expect(merged.length, context).toBeGreaterThan(0);
            expect(merged.length, context).toBeLessThanOrEqual(Math.ceil(chunk.length / MERGED_STATEMENTS_MAX));
            for (const [query] of merged)
              expect(query.sql.split(' AS batch_statement,').length - 1, context).toBeLessThanOrEqual(
                MERGED_STATEMENTS_MAX,
              );
            batches += 1;
            answers += chunk.length;
          }
        }
      } finally {
        run.mockRestore();
        installEngine(api.engine);
        delete process.env.ANALYTICS_ANSWER_CACHE;
      }
      console.info(`trino differential: ${answers} answers in ${batches} batches, as DuckDB answers each alone`);
      expect(answers).toBeGreaterThan(CALLS / 3);
    },
  );

  it("a dashboard's cards in one batch: each relation read once, every answer as DuckDB gives it alone", async () => {
    process.env.ANALYTICS_ANSWER_CACHE = 'off';
    const run = vi.spyOn(api.trino!.engine, 'run');
    try {
      // Both profiles: the generated domain at the current layout, the shop below it.
      const ranges: Record<string, unknown> = { [generatedDomain]: '30d', [SHOP]: ['2026-02-26', '2026-03-04'] };
      // A view filtered by an attribute (the sessions picked by the kept rows) or by pages (by path lists).
      const views = [[], [['country', 'is_not', 'US']], [['page', 'contains', 'o']]];
      for (const [domain, filters] of [generatedDomain, SHOP].flatMap((d) => views.map((v) => [d, v] as const))) {
        const bodies = [
          { metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'] },
          { metrics: ['visitors', 'bounce_rate'], dimensions: ['referrer'], limit: 5 },
          { metrics: ['visitors'], dimensions: ['country'], limit: 3, offset: 1 },
          // A map beside the card: the same grouping set, another order and page.
          { metrics: ['visitors', 'pageviews'], dimensions: ['country'], sort: { field: 'country', order: 'asc' } },
          { metrics: ['visitors', 'bounce_rate', 'avg_session_duration', 'visits'], dimensions: ['device'] },
          {
            metrics: ['visitors', 'pageviews'],
            dimensions: ['country', 'device'],
            sort: { field: 'country', order: 'desc' },
          },
          { metrics: ['pageviews', 'visits'], dimensions: ['browser'], sort: { field: 'pageviews', order: 'asc' } },
          { metrics: ['visitors', 'pageviews', 'bounce_rate'], dimensions: ['page'], limit: 4 },
          { metrics: ['visitors', 'pageviews', 'visits'], dimensions: ['date'] },
          { metrics: ['visitors'], dimensions: ['week', 'device'], sort: { field: 'week', order: 'desc' } },
          {
            metrics: ['visitors', 'revenue', 'conversion_rate'],
            dimensions: ['os'],
            include_revenue: true,
            sort: { field: 'revenue' },
          },
          { metrics: ['visitors'], dimensions: ['page', 'referrer'], sort: { field: 'page', order: 'desc' }, limit: 3 },
        ].map((body) => ({ domain, date_range: ranges[domain], filters, ...body }));
        // Each body once alone, then the batch of them (one request for the rate limit).
        const token = await tokens[domain]!(bodies.length + 1);
        const context = `${domain} ${JSON.stringify(filters)}`;
        installEngine(api.engine);
        const alone: unknown[] = [];
        for (const body of bodies) {
          const res = await api.request('POST', '/v1/query', { token, body });
          expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
          alone.push(answer(res.body));
        }
        installEngine(api.trino!.engine);
        run.mockClear();
        const res = await api.request('POST', '/v1/query/batch', { token, body: { queries: bodies } });
        expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
        expect(res.body.results.map(answer), context).toEqual(alone);
        expect(alone.filter((a) => (a as { data: unknown[] }).data.length > 1).length, context).toBeGreaterThan(2);
        // Unfiltered, ten cards (a chart by day among them) read the pageview buckets, two (one below the layout)
        // the page buckets, six the sessions: one shared scan reads each once. Filtered, the cards whose bucket
        // relation holds the filtered column share it (the others read raw rows, and their sessions, alone).
        const statements = run.mock.calls.map(([query]) => query.sql).join('\n');
        // Below the layout, fragments without path lists pick a page filter's sessions by their rows: none share.
        const pickedByRows = domain === SHOP && filters.some(([field]) => field === 'page');
        if (pickedByRows) {
          expect(statements, context).not.toContain('GROUPING SETS');
          continue;
        }
        expect(statements, context).toContain('GROUPING SETS');
        const reads = (relation: string) => statements.split(`${relation}"`).length - 1;
        const shared = filters.length ? ['pageview_buckets', 'page_buckets'] : ['page_buckets', 'session_fragments'];
        for (const relation of shared) expect(reads(relation), `${context} ${relation}`).toBeLessThanOrEqual(1);
        if (filters.length === 0) expect(reads('pageview_buckets'), context).toBe(1);
        // The chart and the weeks among them: the shared statement groups by local time.
        const sharedStatements = run.mock.calls
          .map(([query]) => query.sql)
          .filter((sql) => sql.includes('GROUPING SETS'));
        expect(
          sharedStatements.some((sql) => sql.includes('local_s')),
          context,
        ).toBe(true);
      }
      // Visitors alone (distinct visitors beside no sum) and a range without events: the grouping sets' empty set.
      // Two ranges, each two requests alone and a batch.
      const token = await tokens[generatedDomain]!(6);
      for (const date_range of ['30d', ['2020-01-01', '2020-01-31']]) {
        const bodies = [{ metrics: ['visitors'] }, { metrics: ['visitors'], dimensions: ['browser'] }].map((body) => ({
          domain: generatedDomain,
          date_range,
          ...body,
        }));
        installEngine(api.engine);
        const alone: unknown[] = [];
        for (const body of bodies) alone.push(answer((await api.request('POST', '/v1/query', { token, body })).body));
        installEngine(api.trino!.engine);
        run.mockClear();
        const res = await api.request('POST', '/v1/query/batch', { token, body: { queries: bodies } });
        expect(res.body.results?.map(answer), JSON.stringify(date_range)).toEqual(alone);
        expect(run.mock.calls.map(([query]) => query.sql).join('\n')).toContain('GROUPING SETS');
      }
    } finally {
      run.mockRestore();
      installEngine(api.engine);
      delete process.env.ANALYTICS_ANSWER_CACHE;
    }
  });

  it('entry and exit pages, weeks, months, minutes and visits (extensions), in several zones: as DuckDB answers', async () => {
    const bodies: Record<string, unknown>[] = [
      { dimensions: ['entry_page'], metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate'] },
      { dimensions: ['exit_page'], metrics: ['visits', 'avg_session_duration', 'revenue'], include_revenue: true },
      { dimensions: ['entry_page', 'exit_page'], metrics: ['visits'], timezone: 'Asia/Kolkata' },
      { dimensions: ['date', 'entry_page'], metrics: ['visitors', 'visits'], timezone: 'America/New_York' },
      { dimensions: ['exit_page', 'country'], metrics: ['pageviews'], filters: [['page', 'contains', 'o']] },
      { metrics: ['visitors', 'visits'], filters: [['entry_page', 'is', '/pricing']] },
      { dimensions: ['page'], metrics: ['visits', 'bounce_rate'], filters: [['exit_page', 'is_not', '/,(not set)']] },
      {
        dimensions: ['hour'],
        metrics: ['visits'],
        filters: [['entry_page', 'starts_with', '/d']],
        timezone: 'Pacific/Chatham',
      },
      {
        dimensions: ['referrer'],
        metrics: ['visits'],
        filters: [['event', 'is', 'signup']],
        sort: { field: 'visits' },
      },
      { dimensions: ['week'], metrics: ['visitors', 'pageviews', 'bounce_rate'], timezone: 'America/New_York' },
      { dimensions: ['month', 'country'], metrics: ['visitors', 'visits'], timezone: 'Pacific/Chatham' },
      { dimensions: ['week', 'exit_page'], metrics: ['visits'], sort: { field: 'week', order: 'desc' } },
      { dimensions: ['month'], metrics: ['avg_session_duration'], date_range: '90d', timezone: 'Asia/Kolkata' },
      { dimensions: ['minute'], metrics: ['visitors', 'visits'], date_range: '7d', timezone: 'Asia/Kolkata' },
    ];
    let rows = 0;
    for (const body of bodies) {
      const call: Call = {
        method: 'POST',
        path: '/v1/query',
        domain: generatedDomain,
        body: { domain: generatedDomain, date_range: '30d', ...body },
      };
      const token = await tokens[generatedDomain]!(2);
      installEngine(api.engine);
      const { bytes: _local, ...local } = await sendCall(api, call, token);
      installEngine(api.trino!.engine);
      const { bytes: _cloud, ...cloud } = await sendCall(api, call, token);
      installEngine(api.engine);
      const context = JSON.stringify(body);
      expect(local.status, `${context}: ${JSON.stringify(local.body).slice(0, 300)}`).toBe(200);
      expect(cloud, context).toEqual(local);
      rows += (local.body as { data: unknown[] }).data.length;
    }
    expect(rows).toBeGreaterThan(bodies.length * 3);
  });

  it('revenue summed past the 64-bit range: both engines answer the exact sum as the same number', async () => {
    // 1,100 payments of 2^53 - 1 cents on one day, each from its own visitor (a visitor's day stays in 64 bits):
    // their sum, about 9.9e18, is past 2^63 - 1. A sum in the events' BIGINT fails on Trino; the engines sum exactly.
    const whale = 'whale.test';
    const day = '2026-03-05';
    const payments = largePayments({
      domain: whale,
      day,
      count: 1100,
      visitor: (n) => `w${n}`,
      extra: (n) => ({ url_path: '/checkout', country: n % 2 ? 'US' : 'DE' }),
    });
    expect((await api.importEvents(payments)).rejected).toEqual([]);
    const exact = (n: number) => Number(BigInt(Number.MAX_SAFE_INTEGER) * BigInt(n));
    const calls: { call: Call; revenue: (body: any) => unknown; expected: unknown }[] = [
      {
        call: {
          method: 'POST',
          path: '/v1/query',
          domain: whale,
          body: { domain: whale, metrics: ['revenue', 'conversions'], date_range: [day, day], include_revenue: true },
        },
        revenue: (b) => b.data[0].metrics.revenue,
        expected: exact(1100),
      },
      {
        call: {
          method: 'POST',
          path: '/v1/query',
          domain: whale,
          body: {
            domain: whale,
            metrics: ['revenue'],
            dimensions: ['country'],
            date_range: [day, day],
            include_revenue: true,
            sort: { field: 'revenue', order: 'desc' },
          },
        },
        revenue: (b) => b.data.map((r: { metrics: { revenue: number } }) => r.metrics.revenue),
        expected: [exact(550), exact(550)],
      },
      {
        call: {
          method: 'POST',
          path: '/v1/query',
          domain: whale,
          body: {
            domain: whale,
            metrics: ['revenue', 'conversion_rate'],
            dimensions: ['date'],
            date_range: [day, day],
            include_revenue: true,
          },
        },
        revenue: (b) => b.data[0].metrics.revenue,
        expected: exact(1100),
      },
    ];
    // Each call on both engines, on a key of its own.
    const token = await rotatingToken(api, { owner: 'whale', domains: [whale], scopes: ['analytics:read'] })(
      calls.length * 2,
    );
    for (const { call, revenue, expected } of calls) {
      installEngine(api.engine);
      const local = await sendCall(api, call, token);
      installEngine(api.trino!.engine);
      const cloud = await sendCall(api, call, token);
      installEngine(api.engine);
      const context = `${call.method} ${call.path}: ${JSON.stringify(local.body).slice(0, 300)}`;
      expect(local.status, context).toBe(200);
      expect(revenue(local.body), context).toEqual(expected);
      expect({ status: cloud.status, body: cloud.body }, context).toEqual({ status: local.status, body: local.body });
    }
  });
});
