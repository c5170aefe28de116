import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DEMO_DOMAIN } from '../../cli/demo-seed.js';
import { freePort } from '../../local/tools/local-process.js';
import { answer } from '../support/engine-calls.js';
import { trinoAvailable } from '../support/trino-available.js';

// `npm start` and `ANALYTICS_ENGINE=trino npm start` as a user runs them, one after the other on the same data
// folder: the first seeds the demo and prints its key; the second says what it provisioned and answers every
// endpoint with the same bodies through the Athena engine on Trino; Ctrl-C stops it and its Trino.

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'start-trino-'));
// Every server started here, stopped at the end even when an assertion failed first: Ctrl-C (so it stops its
// Trino), then a kill if it has not exited within 20 s.
const started: ChildProcessWithoutNullStreams[] = [];
afterAll(async () => {
  for (const child of started.filter((c) => c.exitCode === null && c.signalCode === null)) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

interface Running {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  url: string;
}

async function start(env: Record<string, string>, ready: RegExp): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, ...env, ANALYTICS_DATA_DIR: dataDir, PORT: String(port), POWERTOOLS_LOG_LEVEL: 'SILENT' },
  });
  started.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 240_000;
  while (!ready.test(output)) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) throw new Error(`npm start did not get ready:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { child, output: () => output, url: `http://127.0.0.1:${port}` };
}

function stop(running: Running): Promise<number | null> {
  return new Promise((resolve) => {
    running.child.once('exit', (code) => resolve(code));
    running.child.kill('SIGINT');
  });
}

const range = ['2026-01-01', new Date().toISOString().slice(0, 10)];
const calls: [string, string, unknown?][] = [
  [
    'POST',
    '/v1/query',
    { metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'], date_range: '30d' },
  ],
  [
    'POST',
    '/v1/query',
    {
      metrics: ['visitors', 'revenue', 'conversions'],
      dimensions: ['page', 'country'],
      date_range: range,
      include_revenue: true,
      limit: 20,
    },
  ],
  [
    'POST',
    '/v1/query',
    { metrics: ['pageviews'], dimensions: ['date'], date_range: '7d', timezone: 'America/New_York' },
  ],
  ['POST', '/v1/journeys/list', { domain: DEMO_DOMAIN, date_range: '30d', limit: 10 }],
  ['GET', '/v1/events?period=30d'],
  ['GET', '/v1/events/signup/properties?period=90d'],
];

describe.skipIf(!trinoAvailable('npm start with Trino suite'))('ANALYTICS_ENGINE=trino npm start', () => {
  it(
    'answers every endpoint with the bodies of the default engine, and stops cleanly',
    { timeout: 600_000 },
    async () => {
      const duckdb = await start({}, /curl -s -X POST/);
      const key = /aqk_[A-Za-z0-9_-]+/.exec(duckdb.output())![0];
      const send = async (running: Running, [method, path, body]: [string, string, unknown?]) => {
        const res = await fetch(`${running.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return { status: res.status, body: answer(await res.json()) };
      };
      const expected = [];
      for (const call of calls) expected.push(await send(duckdb, call));
      // A visitor of the list, for the one-visitor endpoints.
      const visitor = (expected[3]!.body as { data: { visitor_id: string }[] }).data[0]!.visitor_id;
      const visitorCalls: [string, string, unknown][] = ['timeline', 'stats', 'activity'].map((kind) => [
        'POST',
        `/v1/journeys/${kind}`,
        { domain: DEMO_DOMAIN, visitor_id: visitor, ...(kind === 'timeline' ? { date_range: '30d' } : {}) },
      ]);
      for (const call of visitorCalls) expected.push(await send(duckdb, call));
      expect(await stop(duckdb)).toBe(0);

      const trino = await start({ ANALYTICS_ENGINE: 'trino' }, /Analytics API listening/);
      expect(trino.output()).toMatch(
        /Queries run on the Athena engine through Trino .* in \d+ ms, server up in \d+ ms, 6 Glue tables created in \d+ ms/,
      );
      const answers = [];
      for (const call of [...calls, ...visitorCalls]) answers.push(await send(trino, call));
      expect(answers).toEqual(expected);
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(await stop(trino)).toBe(0);
    },
  );
});
