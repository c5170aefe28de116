import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AthenaClient } from '@aws-sdk/client-athena';
import { AthenaEngine } from '../../shared/engines/athena-engine.js';
import { EngineTimeoutError } from '../../shared/engines/engine-errors.js';

// The real SDK against an Athena that stops answering: every call is cut off at the statement's deadline, retries
// included, so a request ends near its deadline however slowly Athena (or an overloaded emulator) answers.

type Action = 'StartQueryExecution' | 'GetQueryExecution' | 'GetQueryResults' | 'StopQueryExecution';

const TIMEOUT_MS = 1_500;
/** The deadline, the stop's own bound (2 s) and slack for a loaded machine. */
const MOST_MS = TIMEOUT_MS + 2_000 + 1_500;

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

async function timed(run: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

describe('AthenaEngine against an Athena that stops answering (real SDK, local HTTP server)', () => {
  it('answers a statement whose calls are answered (the server speaks the protocol)', async () => {
    await expect(engine().run({ sql: 'SELECT 1 AS n', params: [] })).resolves.toMatchObject({
      rows: [{ n: 1 }],
    });
    expect(calls).toEqual(['StartQueryExecution', 'GetQueryExecution', 'GetQueryResults']);
  });

  it.each(['GetQueryExecution', 'GetQueryResults'] as const)(
    'ends a statement whose %s hangs at the deadline with a 504, and stops the statement',
    async (action) => {
      stalled.add(action);
      const { error, ms } = await timed(engine().run({ sql: 'SELECT 1 AS n', params: [] }));
      expect(error).toBeInstanceOf(EngineTimeoutError);
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
      expect(ms).toBeLessThan(MOST_MS);
      expect(calls.filter((c) => c === action)).toHaveLength(1); // the hung call was not retried past the deadline
      expect(calls.at(-1)).toBe('StopQueryExecution');
    },
  );

  it('ends at the deadline when the start hangs, and when the stop hangs too', async () => {
    stalled.add('StartQueryExecution');
    const start = await timed(engine().run({ sql: 'SELECT 1 AS n', params: [] }));
    expect(start.error).toBeInstanceOf(EngineTimeoutError);
    expect(start.ms).toBeLessThan(MOST_MS);

    stalled = new Set(['GetQueryExecution', 'StopQueryExecution']);
    calls = [];
    const stop = await timed(engine().run({ sql: 'SELECT 1 AS n', params: [] }));
    expect(stop.error).toBeInstanceOf(EngineTimeoutError);
    expect(stop.ms).toBeLessThan(MOST_MS);
    expect(calls).toContain('StopQueryExecution');
  });
});
