import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  InvalidRequestException,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
  TooManyRequestsException,
  type ColumnInfo,
  type GetQueryResultsCommandOutput,
  type QueryExecutionState,
} from '@aws-sdk/client-athena';
import {
  AthenaEngine,
  GET_QUERY_EXECUTION_QUOTA,
  pollWait,
  athenaSettingsFromEnv,
  decodeValue,
  type AthenaSettings,
} from '../../shared/engines/athena-engine.js';
import {
  EngineBusyError,
  EngineResourcesError,
  EngineScanLimitError,
  EngineStatementTooComplexError,
  EngineTimeoutError,
} from '../../shared/engines/engine-errors.js';
import { apiErrorOfEngine } from '../../shared/http/engine-errors.js';
import { logger, withRequestLogger } from '../../shared/log.js';
import { analyticsEngine, installEngine, registerEngineFactory } from '../../shared/engines/registry.js';
import { int, print, sql, str, date, timestamp, bool } from '../../shared/query/sql/sql.js';

const athena = mockClient(AthenaClient);

const settings: AthenaSettings = {
  workgroup: 'analytics-wg',
  database: 'analytics_db',
  table: 'events',
  resultReuseMinutes: 15,
  timeoutMs: 10_000,
};

/** A fake clock: sleep advances it and records each wait, so backoff is asserted without real time. */
function fakeClock() {
  let now = 1_000_000;
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    sleep: async (ms: number) => {
      waits.push(ms);
      now += ms;
    },
  };
}

function engine(clock = fakeClock(), overrides: Partial<AthenaSettings> = {}) {
  return new AthenaEngine(
    { ...settings, ...overrides },
    { client: new AthenaClient({ region: 'eu-west-1' }), sleep: clock.sleep, now: clock.now },
  );
}

function execution(State: QueryExecutionState, extra: Record<string, unknown> = {}) {
  return {
    QueryExecution: {
      QueryExecutionId: 'q-1',
      Status: { State, ...extra },
      Statistics: { DataScannedInBytes: 12_345 },
    },
  };
}

const column = (Name: string, Type: string): ColumnInfo => ({ Name, Label: Name, Type });
const row = (...values: (string | undefined)[]) => ({
  Data: values.map((v) => (v === undefined ? {} : { VarCharValue: v })),
});

function page(
  columns: ColumnInfo[],
  rows: ReturnType<typeof row>[],
  NextToken?: string,
  withHeader = false,
): Partial<GetQueryResultsCommandOutput> {
  const header = row(...columns.map((c) => c.Name));
  return {
    ResultSet: { ResultSetMetadata: { ColumnInfo: columns }, Rows: withHeader ? [header, ...rows] : rows },
    NextToken,
  };
}

const query = print(
  sql`SELECT url_path, count(*) AS n FROM events WHERE domain = ${str('shop.example.com')} AND dt >= ${date('2026-03-01')} LIMIT 10`,
);

beforeEach(() => {
  athena.reset();
  athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
});

afterEach(() => {
  athena.reset();
});

describe('AthenaEngine.run', () => {
  it('starts the query in the workgroup with literals, result reuse and an idempotency token', async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [], undefined, true));

    await engine().run(
      print(
        sql`SELECT 1 WHERE a = ${str("it's")} AND b = ${int(3)} AND c = ${bool(true)} AND d = ${timestamp(new Date('2026-03-01T10:00:00Z'))}`,
      ),
    );

    const [start] = athena.commandCalls(StartQueryExecutionCommand);
    const input = start!.args[0].input;
    expect(input.WorkGroup).toBe('analytics-wg');
    expect(input.QueryString).toBe(
      "SELECT 1 WHERE a = 'it''s' AND b = 3 AND c = true AND d = TIMESTAMP '2026-03-01 10:00:00.000'",
    );
    // Athena takes execution parameters in WHERE only; every value is in the text instead.
    expect(input.ExecutionParameters).toBeUndefined();
    expect(input.QueryExecutionContext).toEqual({ Database: 'analytics_db' });
    expect(input.ResultReuseConfiguration).toEqual({
      ResultReuseByAgeConfiguration: { Enabled: true, MaxAgeInMinutes: 15 },
    });
    expect(input.ClientRequestToken).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("gives two domains' statements different texts, so result reuse (matched on the text) never crosses domains", async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).resolves(page([], [], undefined, true));
    const forDomain = (domain: string) => print(sql`SELECT count(*) AS n FROM events WHERE domain = ${str(domain)}`);
    await engine().run(forDomain('a.example'));
    await engine().run(forDomain('b.example'));
    const [a, b] = athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input.QueryString);
    expect(a).toContain("domain = 'a.example'");
    expect(b).toContain("domain = 'b.example'");
    expect(a).not.toBe(b);
  });

  it("ends each statement by the request's deadline, shared by all its statements: 504 without starting past it", async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('RUNNING'));
    athena.on(StopQueryExecutionCommand).resolves({});
    const clock = fakeClock();
    const e = engine(clock, { timeoutMs: 20_000 });
    const deadline = clock.now() + 3_000;
    await withRequestLogger(
      logger,
      async () => {
        await expect(e.run(query)).rejects.toBeInstanceOf(EngineTimeoutError);
        expect(clock.waits.reduce((x, y) => x + y, 0)).toBeLessThanOrEqual(3_000);
        // The request's second statement has no time left: it is not started at all.
        await expect(e.run(query)).rejects.toBeInstanceOf(EngineTimeoutError);
      },
      deadline,
    );
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(1);
    expect(athena.commandCalls(StopQueryExecutionCommand)).toHaveLength(1);
  });

  it('sends no stop for a query that succeeded when reading its results fails', async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).rejects(new Error('connection reset'));
    athena.on(StopQueryExecutionCommand).resolves({});
    await expect(engine().run(query)).rejects.toThrow('connection reset');
    expect(athena.commandCalls(StopQueryExecutionCommand)).toHaveLength(0);
  });

  it('stops the query when polling it is throttled, and answers 503', async () => {
    athena
      .on(GetQueryExecutionCommand)
      .rejects(new TooManyRequestsException({ message: 'Rate exceeded', $metadata: {} }));
    athena.on(StopQueryExecutionCommand).resolves({});
    await expect(engine().run(query)).rejects.toBeInstanceOf(EngineBusyError);
    expect(athena.commandCalls(StopQueryExecutionCommand)).toHaveLength(1);
  });

  it('refuses a NUL in a value with a 400 before calling Athena', async () => {
    const error = await engine()
      .run(print(sql`SELECT ${str('a\u0000b')}`))
      .catch((e: unknown) => e);
    expect(apiErrorOfEngine(error)?.status).toBe(400);
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
  });

  it('sends a fresh client request token per query', async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).resolves(page([], [], undefined, true));
    const e = engine();
    await e.run(query);
    await e.run(query);
    const tokens = athena.commandCalls(StartQueryExecutionCommand).map((c) => c.args[0].input.ClientRequestToken);
    expect(new Set(tokens).size).toBe(2);
  });

  it('turns result reuse off when the max age is 0', async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).resolves(page([], [], undefined, true));
    await engine(fakeClock(), { resultReuseMinutes: 0 }).run(query);
    expect(athena.commandCalls(StartQueryExecutionCommand)[0]!.args[0].input.ResultReuseConfiguration).toEqual({
      ResultReuseByAgeConfiguration: { Enabled: false },
    });
  });

  it('returns typed rows and the bytes scanned', async () => {
    const columns = [
      column('page', 'varchar'),
      column('n', 'bigint'),
      column('i', 'integer'),
      column('rate', 'double'),
      column('amount', 'decimal'),
      column('bounced', 'boolean'),
      column('first_seen', 'timestamp'),
      column('day', 'date'),
    ];
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena
      .on(GetQueryResultsCommand)
      .resolves(
        page(
          columns,
          [
            row('/pricing', '42', '7', '12.5', '1999.99', 'true', '2026-03-01 14:05:09.120', '2026-03-01'),
            row('', '0', '-1', '0.0', '0', 'false', undefined, undefined),
            row(undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined),
          ],
          undefined,
          true,
        ),
      );

    const result = await engine().run(query);

    expect(result.stats).toEqual({ bytesScanned: 12_345 });
    expect(result.rows).toEqual([
      {
        page: '/pricing',
        n: 42,
        i: 7,
        rate: 12.5,
        amount: 1999.99,
        bounced: true,
        first_seen: '2026-03-01 14:05:09.120',
        day: '2026-03-01',
      },
      { page: '', n: 0, i: -1, rate: 0, amount: 0, bounced: false, first_seen: null, day: null },
      { page: null, n: null, i: null, rate: null, amount: null, bounced: null, first_seen: null, day: null },
    ]);
  });

  it('reads every page and skips the header row on the first page only', async () => {
    const columns = [column('visitor_id', 'varchar'), column('n', 'bigint')];
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena
      .on(GetQueryResultsCommand, { NextToken: undefined })
      .resolves(page(columns, [row('v1', '1'), row('v2', '2')], 'page-2', true))
      .on(GetQueryResultsCommand, { NextToken: 'page-2' })
      .resolves(page(columns, [row('v3', '3'), row('visitor_id', '4')], 'page-3'))
      .on(GetQueryResultsCommand, { NextToken: 'page-3' })
      .resolves(page(columns, [row('v5', '5')]));

    const { rows } = await engine().run(query);

    // A data row that happens to equal the column names on a later page is data, not a header.
    expect(rows).toEqual([
      { visitor_id: 'v1', n: 1 },
      { visitor_id: 'v2', n: 2 },
      { visitor_id: 'v3', n: 3 },
      { visitor_id: 'visitor_id', n: 4 },
      { visitor_id: 'v5', n: 5 },
    ]);
    const calls = athena.commandCalls(GetQueryResultsCommand).map((c) => c.args[0].input);
    expect(calls).toEqual([
      { QueryExecutionId: 'q-1', MaxResults: 1000, NextToken: undefined },
      { QueryExecutionId: 'q-1', MaxResults: 1000, NextToken: 'page-2' },
      { QueryExecutionId: 'q-1', MaxResults: 1000, NextToken: 'page-3' },
    ]);
  });

  it('polls QUEUED → RUNNING → SUCCEEDED with doubling waits capped at 500 ms', async () => {
    const states: QueryExecutionState[] = [
      'QUEUED',
      'QUEUED',
      'RUNNING',
      'RUNNING',
      'RUNNING',
      'RUNNING',
      'RUNNING',
      'SUCCEEDED',
    ];
    const get = athena.on(GetQueryExecutionCommand);
    for (const state of states) get.resolvesOnce(execution(state));
    athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [row('1')], undefined, true));
    const clock = fakeClock();

    const { rows } = await engine(clock).run(query);

    expect(rows).toEqual([{ n: 1 }]);
    expect(clock.waits).toEqual([100, 200, 400, 500, 500, 500, 500, 500]);
    expect(athena.commandCalls(GetQueryExecutionCommand)).toHaveLength(8);
    expect(athena.commandCalls(StopQueryExecutionCommand)).toHaveLength(0);
  });

  it('stops the query and answers 504 once the timeout passes', async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('RUNNING'));
    athena.on(StopQueryExecutionCommand).resolves({});
    const clock = fakeClock();

    await expect(engine(clock, { timeoutMs: 5_000 }).run(query)).rejects.toBeInstanceOf(EngineTimeoutError);

    expect(athena.commandCalls(StopQueryExecutionCommand).map((c) => c.args[0].input)).toEqual([
      { QueryExecutionId: 'q-1' },
    ]);
    expect(clock.waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(5_000);
    expect(athena.commandCalls(GetQueryResultsCommand)).toHaveLength(0);
  });

  it('still answers 504 when stopping the query fails', async () => {
    athena.on(GetQueryExecutionCommand).resolves(execution('RUNNING'));
    athena.on(StopQueryExecutionCommand).rejects(new Error('boom'));
    await expect(engine(fakeClock(), { timeoutMs: 2_000 }).run(query)).rejects.toBeInstanceOf(EngineTimeoutError);
  });

  it("maps FAILED to a generic error that carries neither the SQL nor Athena's message", async () => {
    athena.on(GetQueryExecutionCommand).resolves(
      execution('FAILED', {
        StateChangeReason: "COLUMN_NOT_FOUND: line 1:8: Column 'secret_column' cannot be resolved",
        AthenaError: { ErrorCategory: 2, ErrorType: 1006, Retryable: false },
      }),
    );
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(apiErrorOfEngine(error)).toBeNull();
    expect(String((error as Error).message)).not.toMatch(/secret_column|SELECT/);
  });

  it('maps FAILED for lack of resources to a 503 that says what to do', async () => {
    athena.on(GetQueryExecutionCommand).resolves(
      execution('FAILED', {
        StateChangeReason: 'Query exhausted resources at this scale factor',
        AthenaError: { ErrorCategory: 1, ErrorType: 2, Retryable: false },
      }),
    );
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineResourcesError);
    const answer = apiErrorOfEngine(error)!;
    expect(answer.status).toBe(503);
    expect(answer.message).toMatch(/narrow the date range/);
  });

  it('maps a retryable FAILED to 503', async () => {
    athena.on(GetQueryExecutionCommand).resolves(
      execution('FAILED', {
        StateChangeReason: 'Internal service error',
        AthenaError: { ErrorCategory: 1, ErrorType: 100, Retryable: true },
      }),
    );
    await expect(engine().run(query)).rejects.toBeInstanceOf(EngineBusyError);
  });

  it('maps CANCELLED to a generic error', async () => {
    athena
      .on(GetQueryExecutionCommand)
      .resolves(execution('CANCELLED', { StateChangeReason: 'Query was cancelled by user' }));
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(apiErrorOfEngine(error)).toBeNull();
  });

  it.each(['CANCELLED', 'FAILED'] as const)(
    'maps the workgroup scan cutoff (%s) to a 400 that says to narrow the range',
    async (state) => {
      athena
        .on(GetQueryExecutionCommand)
        .resolves(execution(state, { StateChangeReason: 'Bytes scanned limit was exceeded' }));
      const error = await engine()
        .run(query)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineScanLimitError);
      const answered = apiErrorOfEngine(error)!;
      expect(answered.status).toBe(400);
      expect(answered.code).toBe('query_too_large');
      expect(answered.message).toMatch(/narrow the date range/);
      expect(answered.toBody()).toHaveProperty('details');
    },
  );

  it("maps Trino's stage limit to EngineStatementTooComplexError, a 400 that says to use fewer filters", async () => {
    athena.on(GetQueryExecutionCommand).resolves(
      execution('FAILED', {
        StateChangeReason:
          "Number of stages in the query (154) exceeds the allowed maximum (150). If the query contains multiple aggregates with DISTINCT over different columns, please set the 'distinct_aggregations_strategy' session property to 'single_step'.",
      }),
    );
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineStatementTooComplexError);
    const answered = apiErrorOfEngine(error)!;
    expect(answered.status).toBe(400);
    expect(answered.code).toBe('query_too_large');
    expect(answered.message).toMatch(/fewer filters/);
  });

  it('maps throttling on StartQueryExecution to 503', async () => {
    athena.on(StartQueryExecutionCommand).rejects(
      new TooManyRequestsException({
        message: 'Rate exceeded',
        $metadata: {},
        Reason: 'CONCURRENT_QUERY_LIMIT_EXCEEDED',
      }),
    );
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineBusyError);
    const answered = apiErrorOfEngine(error)!;
    expect(answered.status).toBe(503);
    expect(answered.headers['retry-after']).toMatch(/^\d+$/);
    expect(athena.commandCalls(GetQueryExecutionCommand)).toHaveLength(0);
  });

  it('retries a start refused by the active-query quota with growing waits, while the deadline leaves room', async () => {
    const quota = () =>
      new TooManyRequestsException({
        message: 'Rate exceeded',
        $metadata: {},
        Reason: 'CONCURRENT_QUERY_LIMIT_EXCEEDED',
      });
    athena
      .on(StartQueryExecutionCommand)
      .rejectsOnce(quota())
      .rejectsOnce(quota())
      .resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [row('1')], undefined, true));
    const clock = fakeClock();
    const { rows } = await engine(clock).run(query);
    expect(rows).toEqual([{ n: 1 }]);
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(3);
    // Two jittered waits before the first poll: the second drawn from a doubled range.
    const [first, second] = clock.waits;
    expect(first).toBeGreaterThanOrEqual(100);
    expect(first).toBeLessThanOrEqual(200);
    expect(second).toBeGreaterThanOrEqual(200);
    expect(second).toBeLessThanOrEqual(400);
  });

  describe("the stack's bound on running statements (maxConcurrentQueries)", () => {
    /** Slots counted in memory, as the counters table counts them for the stack; `held` taken by others first. */
    function slots(limit: number, held: string[] = []) {
      const holders = new Set(held);
      return {
        holders,
        take: async (holder: string) => (holders.size < limit ? holders.add(holder).size : 0),
        release: async (holder: string): Promise<void> => void holders.delete(holder),
      };
    }
    const bounded = (clock: ReturnType<typeof fakeClock>, s: ReturnType<typeof slots>) =>
      new AthenaEngine(
        { ...settings, maxConcurrentQueries: 1 },
        { client: new AthenaClient({ region: 'eu-west-1' }), slots: s, sleep: clock.sleep, now: clock.now },
      );

    it('waits for a slot with growing, jittered pauses, runs, and gives the slot back', async () => {
      athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
      athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
      athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [row('1')], undefined, true));
      const s = slots(1, ['another function']);
      const clock = fakeClock();
      const sleep = clock.sleep;
      // The other holder ends its statement during the second wait.
      clock.sleep = async (ms) => {
        await sleep(ms);
        if (clock.waits.length === 2) s.holders.delete('another function');
      };
      const { rows } = await bounded(clock, s).run(query);
      expect(rows).toEqual([{ n: 1 }]);
      expect(clock.waits[0]).toBeGreaterThanOrEqual(100);
      expect(clock.waits[0]).toBeLessThanOrEqual(200);
      expect(clock.waits[1]).toBeGreaterThanOrEqual(200);
      expect(s.holders.size).toBe(0);
    });

    it('polls every 100 ms while few statements run, and less often the more ran when it took its slot', async () => {
      const waitsWith = async (others: number) => {
        athena.reset();
        athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
        const get = athena.on(GetQueryExecutionCommand);
        for (const state of ['QUEUED', 'RUNNING', 'RUNNING'] as const) get.resolvesOnce(execution(state));
        get.resolves(execution('SUCCEEDED'));
        athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [row('1')], undefined, true));
        const clock = fakeClock();
        const s = slots(
          others + 1,
          Array.from({ length: others }, (_, i) => `function ${i}`),
        );
        await bounded(clock, s).run(query);
        return clock.waits;
      };
      expect(await waitsWith(0)).toEqual([100, 100, 100, 100]);
      expect(await waitsWith(3)).toEqual([150, 150, 150, 150]);
      expect(await waitsWith(19)).toEqual([550, 550, 550, 550]);
    });

    it('polls before the deadline however long its waits: a wait past it is cut short', async () => {
      athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
      athena.on(GetQueryExecutionCommand).resolves(execution('RUNNING'));
      athena.on(StopQueryExecutionCommand).resolves({});
      // 99 others running: 2,525 ms between polls, more than the 2 s left.
      const s = slots(
        100,
        Array.from({ length: 99 }, (_, i) => `function ${i}`),
      );
      const clock = fakeClock();
      const limited = new AthenaEngine(
        { ...settings, timeoutMs: 2_000, maxConcurrentQueries: 100 },
        { client: new AthenaClient({ region: 'eu-west-1' }), slots: s, sleep: clock.sleep, now: clock.now },
      );
      await expect(limited.run(query)).rejects.toBeInstanceOf(EngineTimeoutError);
      expect(athena.commandCalls(GetQueryExecutionCommand)).toHaveLength(1);
      expect(clock.waits).toEqual([1_900]);
      expect(athena.commandCalls(StopQueryExecutionCommand)).toHaveLength(1);
    });

    it("keeps the stack's polls within Athena's GetQueryExecution quota", () => {
      const perSecond = (held: number) => 1_000 / pollWait(held, 3);
      for (let n = 1; n <= 1_000; n++) {
        // n statements running, each having counted the n: fewer than 40 polls a second together.
        expect(n * perSecond(n)).toBeLessThan(40);
        // Each having counted only those started before it, none ending since: below the quota up to 30 slots.
        const stale = Array.from({ length: n }, (_, k) => perSecond(k + 1)).reduce((a, b) => a + b, 0);
        if (n <= 30) expect(stale).toBeLessThan(GET_QUERY_EXECUTION_QUOTA);
        if (n === 20) expect(Math.round(stale)).toBe(84);
      }
      // Without slots: doubling waits, as a lone statement's.
      expect([0, 1, 2, 3, 9].map((poll) => pollWait(undefined, poll))).toEqual([100, 200, 400, 500, 500]);
    });

    it('answers 503 without starting a query when no slot frees while the deadline leaves room', async () => {
      const s = slots(1, ['another function']);
      const error = await bounded(fakeClock(), s)
        .run(query)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EngineBusyError);
      expect(apiErrorOfEngine(error)!.status).toBe(503);
      expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
      expect([...s.holders]).toEqual(['another function']);
    });

    it('answers without waiting for a release that hangs or fails: the slot ends with its hold', async () => {
      athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
      athena.on(GetQueryExecutionCommand).resolves(execution('SUCCEEDED'));
      athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [row('1')], undefined, true));
      const hanging = { ...slots(1), release: () => new Promise<void>(() => {}) };
      const started = performance.now();
      await expect(bounded(fakeClock(), hanging).run(query)).resolves.toMatchObject({ rows: [{ n: 1 }] });
      expect(performance.now() - started).toBeLessThan(3_000);
      const failing = { ...slots(1), release: () => Promise.reject(new Error('ProvisionedThroughputExceeded')) };
      await expect(bounded(fakeClock(), failing).run(query)).resolves.toMatchObject({ rows: [{ n: 1 }] });
    });

    it('gives the slot back when the statement fails', async () => {
      athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
      athena.on(GetQueryExecutionCommand).resolves(execution('FAILED', { StateChangeReason: 'SYNTAX_ERROR' }));
      const s = slots(1);
      await expect(bounded(fakeClock(), s).run(query)).rejects.toThrow();
      expect(s.holders.size).toBe(0);
    });
  });

  it('answers 503 without calling Athena for a statement longer than Athena accepts (262,144 bytes)', async () => {
    const long = print(sql`SELECT count(*) AS n FROM events WHERE domain = ${str('x'.repeat(262_144))}`);
    const error = await engine()
      .run(long)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EngineBusyError);
    expect(apiErrorOfEngine(error)!.status).toBe(503);
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
  });

  it("runs a statement once more when a file it listed was deleted before it opened it (upkeep's clean-up), then answers 503", async () => {
    const vanished = execution('FAILED', {
      StateChangeReason: 'HIVE_CANNOT_OPEN_SPLIT: Error opening Hive split s3://b/events/x.parquet: NoSuchKey',
    });
    athena.on(GetQueryExecutionCommand).resolvesOnce(vanished).resolves(execution('SUCCEEDED'));
    athena.on(GetQueryResultsCommand).resolves(page([column('n', 'bigint')], [row('7')], undefined, true));
    expect((await engine().run(query)).rows).toEqual([{ n: 7 }]);
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(2);
    athena.reset();
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves(vanished);
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(apiErrorOfEngine(error)!.status).toBe(503);
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(2);
  });

  it('lets other StartQueryExecution errors through as 500s', async () => {
    athena
      .on(StartQueryExecutionCommand)
      .rejects(new InvalidRequestException({ message: 'line 1:1: mismatched input', $metadata: {} }));
    const error = await engine()
      .run(query)
      .catch((e: unknown) => e);
    expect(apiErrorOfEngine(error)).toBeNull();
  });

  it('speaks Trino through the Athena dialect on the configured table', () => {
    const e = engine();
    expect(e.target.dialect.name).toBe('athena');
    expect(print(sql`SELECT * FROM ${e.target.catalog.tables.events}`).sql).toBe(
      'SELECT * FROM "analytics_db"."events"',
    );
  });
});

describe('decodeValue', () => {
  it.each([
    ['varchar', 'abc', 'abc'],
    ['varchar', '', ''],
    ['bigint', '9007199254740991', 9007199254740991],
    ['integer', '-3', -3],
    ['double', '0.25', 0.25],
    ['decimal', '10.50', 10.5],
    ['boolean', 'true', true],
    ['boolean', 'false', false],
    ['timestamp', '2026-03-01 00:00:00.000', '2026-03-01 00:00:00.000'],
    ['array', '[a, b]', '[a, b]'],
    ['bigint', undefined, null],
    ['varchar', undefined, null],
  ] as const)('%s %j → %j', (type, text, expected) => {
    expect(decodeValue(text, type)).toEqual(expected);
  });
});

describe('Athena settings from the environment', () => {
  const env = { ATHENA_WORKGROUP: 'wg', ATHENA_DATABASE: 'db', ATHENA_TABLE: 'events' };

  it('reads the names and defaults', () => {
    expect(athenaSettingsFromEnv(env)).toEqual({
      workgroup: 'wg',
      database: 'db',
      table: 'events',
      resultReuseMinutes: 0,
      timeoutMs: 25_000,
      maxConcurrentQueries: 0,
    });
    expect(
      athenaSettingsFromEnv({ ...env, ATHENA_RESULT_REUSE_MINUTES: '0', ATHENA_QUERY_TIMEOUT_MS: '9000' }),
    ).toMatchObject({
      resultReuseMinutes: 0,
      timeoutMs: 9000,
    });
  });

  it('fails fast naming every missing variable', () => {
    expect(() => athenaSettingsFromEnv({ ATHENA_TABLE: 'events' })).toThrow(/ATHENA_WORKGROUP, ATHENA_DATABASE/);
  });

  it('refuses a malformed number', () => {
    expect(() => athenaSettingsFromEnv({ ...env, ATHENA_RESULT_REUSE_MINUTES: 'ten' })).toThrow(
      /ATHENA_RESULT_REUSE_MINUTES/,
    );
    expect(() => athenaSettingsFromEnv({ ...env, ATHENA_RESULT_REUSE_MINUTES: '20000' })).toThrow(
      /ATHENA_RESULT_REUSE_MINUTES/,
    );
  });
});

describe('registry default on Lambda', () => {
  it('builds the Athena engine from the environment when nothing was installed', async () => {
    // A fresh module graph, so no engine installed by another test is cached.
    vi.resetModules();
    const registry = await import('../../shared/engines/registry.js');
    const saved = { ...process.env };
    try {
      delete process.env.ATHENA_WORKGROUP;
      expect(() => registry.analyticsEngine()).toThrow(/ATHENA_WORKGROUP/);
      Object.assign(process.env, { ATHENA_WORKGROUP: 'wg', ATHENA_DATABASE: 'db', ATHENA_TABLE: 'events' });
      const built = registry.analyticsEngine();
      expect(built.target.dialect.name).toBe('athena');
      expect(registry.analyticsEngine()).toBe(built);
    } finally {
      process.env = saved;
    }
  });

  it('serves an installed engine and never builds Athena', () => {
    let built = false;
    registerEngineFactory(() => {
      built = true;
      throw new Error('not here');
    });
    const local = { target: engine().target, billedPerStatement: false, run: async () => ({ rows: [], stats: {} }) };
    installEngine(local);
    expect(analyticsEngine()).toBe(local);
    expect(built).toBe(false);
  });
});
