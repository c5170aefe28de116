import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AthenaClient } from '@aws-sdk/client-athena';
import { AthenaEngine } from '../../shared/engines/athena-engine.js';
import { EngineTimeoutError } from '../../shared/engines/engine-errors.js';
import { logger, withRequestLogger } from '../../shared/log.js';

// The real SDK against an Athena that stops answering: every call is cut off at the statement's deadline, retries
// included, so a request ends near its deadline however slowly Athena (or an overloaded emulator) answers.

type Action = 'StartQueryExecution' | 'GetQueryExecution' | 'GetQueryResults' | 'StopQueryExecution';

const TIMEOUT_MS = 1_500;
/** What a loaded 2-core machine may add to a bound. */
const SLACK_MS = 2_500;
/** The engine's own bounds past a deadline (athena-engine.ts): a stop's 2 s, a succeeded query's results' 3 s. */
const STOP_MS = 2_000;
const RESULTS_GRACE_MS = 3_000;
/** How far past the request's deadline the stop or the results may go (within the handler's 1.5 s to answer). */
const PAST_REQUEST_DEADLINE_MS = 1_000;

let server: Server;
let calls: Action[];
let stalled: Set<Action>;
let endpoint: string;

beforeEach(async () => {
  calls = [];
  stalled = new Set();
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const action = String(req.headers['x-amz-target']).split('.')[1] as Action;
    calls.push(action);
    req.resume();
    if (stalled.has(action)) return; // never answered
    const body = {
      StartQueryExecution: { QueryExecutionId: 'q-1' },
      GetQueryExecution: {
        QueryExecution: { QueryExecutionId: 'q-1', Status: { State: 'SUCCEEDED' }, Statistics: {} },
      },
      GetQueryResults: {
        ResultSet: {
          Rows: [{ Data: [{ VarCharValue: 'n' }] }, { Data: [{ VarCharValue: '1' }] }],
          ResultSetMetadata: { ColumnInfo: [{ Name: 'n', Type: 'integer' }] },
        },
      },
      StopQueryExecution: {},
    }[action];
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function engine(): AthenaEngine {
  const client = new AthenaClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 3,
  });
  return new AthenaEngine(
    { workgroup: 'wg', database: 'db', table: 'events', resultReuseMinutes: 0, timeoutMs: TIMEOUT_MS },
    { client },
  );
}

async function timed(run: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

const query = { sql: 'SELECT 1 AS n', params: [] };

describe('AthenaEngine against an Athena that stops answering (real SDK, local HTTP server)', () => {
  it('answers a statement whose calls are answered (the server speaks the protocol)', async () => {
    await expect(engine().run(query)).resolves.toMatchObject({ rows: [{ n: 1 }] });
    expect(calls).toEqual(['StartQueryExecution', 'GetQueryExecution', 'GetQueryResults']);
  });

  it('ends a statement whose poll hangs at the deadline with a 504, and stops the statement', async () => {
    stalled.add('GetQueryExecution');
    const { error, ms } = await timed(() => engine().run(query));
    expect(error).toBeInstanceOf(EngineTimeoutError);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(calls.at(-1)).toBe('StopQueryExecution');
  });

  it('reads the results of a statement that succeeded a little past the deadline, then 504 without a stop', async () => {
    stalled.add('GetQueryResults');
    const { error, ms } = await timed(() => engine().run(query));
    expect(error).toBeInstanceOf(EngineTimeoutError);
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS + RESULTS_GRACE_MS - 50);
    expect(ms).toBeLessThan(TIMEOUT_MS + RESULTS_GRACE_MS + SLACK_MS);
    expect(calls).not.toContain('StopQueryExecution');
  });

  it('ends at the deadline when the start hangs, and when the stop hangs too', async () => {
    stalled.add('StartQueryExecution');
    const start = await timed(() => engine().run(query));
    expect(start.error).toBeInstanceOf(EngineTimeoutError);
    expect(start.ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);

    stalled = new Set(['GetQueryExecution', 'StopQueryExecution']);
    calls = [];
    const stop = await timed(() => engine().run(query));
    expect(stop.error).toBeInstanceOf(EngineTimeoutError);
    expect(stop.ms).toBeGreaterThanOrEqual(TIMEOUT_MS + STOP_MS - 50);
    expect(stop.ms).toBeLessThan(TIMEOUT_MS + STOP_MS + SLACK_MS);
    expect(calls).toContain('StopQueryExecution');
  });

  it("keeps the stop and the results within a second past the request's deadline", async () => {
    // A request whose deadline comes before the statement's own timeout (a Lambda with little time left).
    const requestMs = 1_000;
    stalled = new Set(['GetQueryExecution', 'StopQueryExecution']);
    const stop = await timed(() => withRequestLogger(logger, () => engine().run(query), Date.now() + requestMs));
    expect(stop.error).toBeInstanceOf(EngineTimeoutError);
    expect(stop.ms).toBeLessThan(requestMs + PAST_REQUEST_DEADLINE_MS + 800);

    stalled = new Set(['GetQueryResults']);
    const results = await timed(() => withRequestLogger(logger, () => engine().run(query), Date.now() + requestMs));
    expect(results.error).toBeInstanceOf(EngineTimeoutError);
    expect(results.ms).toBeGreaterThanOrEqual(requestMs + PAST_REQUEST_DEADLINE_MS - 50);
    expect(results.ms).toBeLessThan(requestMs + PAST_REQUEST_DEADLINE_MS + 800);
  });
});
