import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  StartQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { AthenaEngine } from '../../shared/engines/athena-engine.js';
import type { QueryEngine } from '../../shared/engines/engine.js';
import type { SqlQuery } from '../../shared/query/sql/sql.js';
import { installEngine } from '../../shared/engines/registry.js';
import { SHOP_RANGE, shopEvents } from '../fixtures/shop-events.js';
import { expectErrorResponse } from '../support/http-assertions.js';
import { startTestApi, type TestApi, type TestResponse } from '../support/test-api.js';

// Logs, request ids and the timing figures of `meta`, observed from outside: the structured lines Powertools
// writes to stdout/stderr while a request runs, the X-Request-Id header, and meta.query_ms against an engine
// whose speed the test controls.

// The suite runs with POWERTOOLS_LOG_LEVEL=SILENT (vitest.config.ts); this file needs the INFO lines. Hoisted,
// so it runs before any import creates the process logger.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'INFO';
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  expect((await api.importEvents(shopEvents)).rejected).toEqual([]);
  token = (await api.createKey({ domains: ['shop.test'] })).token;
});
beforeEach(() => {
  tapLogs(process.stdout);
  tapLogs(process.stderr);
});
afterEach(() => {
  installEngine(api.engine);
  vi.restoreAllMocks();
});
afterAll(() => api?.close());

type LogLine = Record<string, unknown> & { level: string; message: string };

// Every structured line the process writes lands here (and not on the terminal); other output passes through.
const written: string[] = [];

function tapLogs(stream: NodeJS.WriteStream): void {
  const write = stream.write.bind(stream);
  vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (!text.startsWith('{"level"')) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    written.push(...text.split('\n').filter((l) => l.trim() !== ''));
    return true;
  }) as typeof stream.write);
}

/** Runs `work` and returns what it answered plus every structured log line written meanwhile. */
async function captureLogs<T>(work: () => Promise<T>): Promise<{ result: T; lines: LogLine[]; raw: string[] }> {
  const from = written.length;
  const result = await work();
  const raw = written.slice(from);
  return { result, lines: raw.map((l) => JSON.parse(l) as LogLine), raw };
}

/** The installed DuckDB engine, made slower by `delayMs` per query (and optionally reporting bytes). */
function slowedEngine(delayMs: number, extra: { bytesScanned?: number; fail?: boolean } = {}): QueryEngine {
  const inner = api.engine;
  return {
    target: inner.target,
    billedPerStatement: inner.billedPerStatement,
    async run(query: SqlQuery) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (extra.fail) throw new Error('engine exploded: internal detail that must stay in the logs');
      const { rows } = await inner.run(query);
      return { rows, stats: extra.bytesScanned === undefined ? {} : { bytesScanned: extra.bytesScanned } };
    },
  };
}

const query = (body: unknown, options: { token?: string } = {}) =>
  api.request('POST', '/v1/query', { token, ...options, body });

function requestIdOf(res: TestResponse): string {
  const id = res.headers.get('x-request-id');
  expect(id).toMatch(UUID);
  return id!;
}

describe('structured logs carry the request id on every line', () => {
  it('a query: one query line per engine query and one request line, all with the id X-Request-Id echoes', async () => {
    // `all` needs the domain's first event first: two engine queries.
    const {
      result: res,
      lines,
      raw,
    } = await captureLogs(() => query({ date_range: 'all', dimensions: ['page'], filters: [['country', 'is', 'US']] }));
    expect(res.status).toBe(200);
    const id = requestIdOf(res);

    expect(lines.map((l) => l.message)).toEqual(['query', 'query', 'request']);
    for (const line of lines) {
      expect(line).toMatchObject({
        request_id: id,
        route: 'Query',
        service: 'analytics-api',
        key_id: expect.stringMatching(/^[0-9a-f]{16}$/),
      });
      expect(typeof line.timestamp).toBe('string');
    }
    for (const line of lines.filter((l) => l.message === 'query')) {
      expect(line).toMatchObject({ level: 'INFO', engine: 'duckdb' });
      expect(line.query_ms).toBeGreaterThanOrEqual(0);
      expect(Number.isInteger(line.rows)).toBe(true);
    }
    expect(lines.at(-1)).toMatchObject({ method: 'POST', path: '/v1/query', status: 200 });
    // Request data stays out of the logs: no filter value, no SQL, no token.
    for (const text of raw) {
      expect(text).not.toContain('"US"');
      expect(text).not.toMatch(/SELECT|aqk_/);
    }
  });

  it.each([
    ['a 400', () => query({ limit: 'ten' }), 400],
    ['a 401', () => query({}, { token: 'aqk_0000000000000000_nope' }), 401],
    ['a 403', () => query({ domain: 'other.test' }), 403],
    [
      'a 404 visitor',
      () => api.request('POST', '/v1/journeys/stats', { token, body: { domain: 'shop.test', visitor_id: 'nobody' } }),
      404,
    ],
  ])('%s: the request line carries the same id and the status', async (_, send, status) => {
    const { result: res, lines } = await captureLogs(send);
    expect(res.status).toBe(status);
    const id = requestIdOf(res);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.request_id).toBe(id);
    expect(lines.at(-1)).toMatchObject({ message: 'request', status });
    // An unrecognised key has no key id to log; a recognised one always does.
    expect(lines.every((l) => (status === 401 ? !('key_id' in l) : typeof l.key_id === 'string'))).toBe(true);
  });

  it('an unexpected engine failure: the failed query line and the error line carry the id; the client gets a bare 500', async () => {
    installEngine(slowedEngine(0, { fail: true }));
    const { result: res, lines, raw } = await captureLogs(() => query({ date_range: [...SHOP_RANGE] }));
    expectErrorResponse(res, 500, 'internal_error');
    const id = requestIdOf(res);

    expect(lines.map((l) => `${l.level} ${l.message}`)).toEqual([
      'INFO query',
      'ERROR unhandled error',
      'INFO request',
    ]);
    for (const line of lines) expect(line.request_id).toBe(id);
    expect(lines[0]).toMatchObject({ failed: true });
    // The detail is logged for the operator, and only there.
    expect(raw.join('\n')).toContain('engine exploded');
    expect(JSON.stringify(res.body)).not.toContain('engine exploded');
  });

  it('concurrent requests never mix their keys: each line belongs to exactly the request that wrote it', async () => {
    installEngine(slowedEngine(30));
    const sends = [
      () => query({ date_range: [...SHOP_RANGE], dimensions: ['date'] }),
      () => query({ date_range: 'all' }),
      () => api.request('GET', '/v1/events', { token, query: { start: SHOP_RANGE[0], end: SHOP_RANGE[1] } }),
      () =>
        api.request('POST', '/v1/journeys/list', { token, body: { domain: 'shop.test', date_range: [...SHOP_RANGE] } }),
      () =>
        api.request('POST', '/v1/journeys/timeline', {
          token,
          body: { domain: 'shop.test', visitor_id: 'v1', date_range: [...SHOP_RANGE] },
        }),
      () => api.request('POST', '/v1/journeys/activity', { token, body: { domain: 'shop.test', visitor_id: 'v3' } }),
      () => query({ limit: 0 }),
    ];
    const { result: responses, lines } = await captureLogs(() =>
      Promise.all([...sends, ...sends].map((send) => send())),
    );

    const ids = responses.map(requestIdOf);
    expect(new Set(ids).size).toBe(responses.length);
    expect(lines.every((l) => typeof l.request_id === 'string')).toBe(true);
    expect(new Set(lines.map((l) => l.request_id))).toEqual(new Set(ids));
    responses.forEach((res, i) => {
      const own = lines.filter((l) => l.request_id === ids[i]);
      expect(own.filter((l) => l.message === 'request')).toEqual([expect.objectContaining({ status: res.status })]);
      // Engine lines of a request are written before its request line, and only 200s ran queries.
      expect(own.at(-1)!.message).toBe('request');
      expect(own.some((l) => l.message === 'query')).toBe(res.status === 200);
    });
  });
});

describe('X-Request-Id', () => {
  it('is a fresh UUID on every answer: success, client errors, local routing errors and server errors', async () => {
    const answers = [
      await query({}),
      await query({ metrics: ['nope'] }),
      await query({}, { token: 'not-a-key' }),
      await api.request('GET', '/v1/nothing-here', { token }),
      await api.request('PUT', '/v1/query', { token }),
    ];
    installEngine(slowedEngine(0, { fail: true }));
    answers.push(await query({}));
    expect(answers.map((r) => r.status)).toEqual([200, 400, 401, 404, 405, 500]);
    const ids = answers.map(requestIdOf);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('meta.query_ms is measured around the engine', () => {
  const DELAY = 150;

  it('grows with a slower engine, by the delay of each engine query', async () => {
    const fast = await query({ date_range: [...SHOP_RANGE] });
    expect(fast.body.meta.query_ms).toBeGreaterThanOrEqual(0);
    expect(fast.body.meta.query_ms).toBeLessThan(DELAY);

    installEngine(slowedEngine(DELAY));
    const one = await query({ date_range: [...SHOP_RANGE] });
    const two = await query({ date_range: 'all' }); // first event, then the query
    expect(one.body.meta.query_ms).toBeGreaterThanOrEqual(DELAY - 1);
    expect(one.body.meta.query_ms).toBeLessThan(2 * DELAY);
    expect(two.body.meta.query_ms).toBeGreaterThanOrEqual(2 * DELAY - 2);
  });

  it('equals the sum of the logged per-query times, on every analytics endpoint', async () => {
    installEngine(slowedEngine(40));
    const sends: [string, () => Promise<TestResponse>][] = [
      ['query', () => query({ date_range: 'all', dimensions: ['page'] })],
      ['events', () => api.request('GET', '/v1/events', { token, query: { period: 'all' } })],
      [
        'property values',
        () =>
          api.request('GET', '/v1/events/signup/properties/plan', {
            token,
            query: { period: 'all', include_revenue: 'true' },
          }),
      ],
      [
        'journeys list',
        () => api.request('POST', '/v1/journeys/list', { token, body: { domain: 'shop.test', date_range: 'all' } }),
      ],
      [
        'journeys timeline',
        () =>
          api.request('POST', '/v1/journeys/timeline', {
            token,
            body: { domain: 'shop.test', visitor_id: 'v1', date_range: 'all' },
          }),
      ],
      [
        'journeys stats',
        () => api.request('POST', '/v1/journeys/stats', { token, body: { domain: 'shop.test', visitor_id: 'v1' } }),
      ],
    ];
    for (const [name, send] of sends) {
      const { result: res, lines } = await captureLogs(send);
      expect(res.status, name).toBe(200);
      const queries = lines.filter((l) => l.message === 'query');
      expect(queries.length, name).toBeGreaterThan(0);
      const logged = queries.reduce((sum, l) => sum + (l.query_ms as number), 0);
      // Each figure is rounded on its own: the sum may differ from the rounded total by under 1 ms per query.
      expect(Math.abs(res.body.meta.query_ms - logged), name).toBeLessThanOrEqual(queries.length);
      expect(res.body.meta.query_ms, name).toBeGreaterThanOrEqual(40 * queries.length - queries.length);
    }
  });

  it('reports bytes scanned in meta and in each query line when the engine reports them', async () => {
    installEngine(slowedEngine(0, { bytesScanned: 1_000 }));
    const { result: res, lines } = await captureLogs(() => query({ date_range: 'all' }));
    expect(res.body.meta.bytes_scanned).toBe(2_000);
    expect(lines.filter((l) => l.message === 'query').map((l) => l.bytes_scanned)).toEqual([1_000, 1_000]);

    installEngine(api.engine);
    const local = await query({ date_range: 'all' });
    expect(local.body.meta).not.toHaveProperty('bytes_scanned');
  });
});

describe('on Athena (client mocked), through the real handler', () => {
  const athena = mockClient(AthenaClient);
  afterAll(() => athena.restore());

  it('the Athena line, the query line and meta all carry the bytes scanned, under the request id', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
    athena.on(GetQueryExecutionCommand).resolves({
      QueryExecution: {
        QueryExecutionId: 'q-1',
        Status: { State: 'SUCCEEDED' },
        Statistics: { DataScannedInBytes: 52_428_800, EngineExecutionTimeInMillis: 800 },
      },
    });
    const columns = [
      { Name: 'visitors', Type: 'bigint' },
      { Name: 'pageviews', Type: 'bigint' },
    ];
    athena.on(GetQueryResultsCommand).resolves({
      ResultSet: {
        ResultSetMetadata: { ColumnInfo: columns },
        Rows: [
          { Data: [{ VarCharValue: 'visitors' }, { VarCharValue: 'pageviews' }] },
          { Data: [{ VarCharValue: '4' }, { VarCharValue: '8' }] },
        ],
      },
    });
    const settings = {
      workgroup: 'wg',
      database: 'analytics',
      table: 'events',
      resultReuseMinutes: 0,
      timeoutMs: 10_000,
    };
    installEngine(
      new AthenaEngine(settings, { client: new AthenaClient({ region: 'eu-west-1' }), sleep: async () => {} }),
    );

    const { result: res, lines } = await captureLogs(() => query({ date_range: [...SHOP_RANGE] }));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data).toEqual([{ dimensions: {}, metrics: { visitors: 4, pageviews: 8 } }]);
    expect(res.body.meta.bytes_scanned).toBe(52_428_800);
    const id = requestIdOf(res);
    expect(lines.map((l) => l.message)).toEqual(['athena query', 'query', 'request']);
    for (const line of lines) expect(line.request_id).toBe(id);
    expect(lines[0]).toMatchObject({ query_execution_id: 'q-1', bytes_scanned: 52_428_800, engine_ms: 800, rows: 1 });
    expect(lines[1]).toMatchObject({ engine: 'athena', bytes_scanned: 52_428_800, rows: 1 });
  });
});
