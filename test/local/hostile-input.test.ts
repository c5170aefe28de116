import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { importEvents, importNdjson } from '../../local/store/local-destination.js';
import { openLocalDynamo } from '../../local/server/local-dynamo.js';
import { localPaths } from '../../local/store/paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { backfillDerived, compactStore } from '../../local/store/backfill.js';
import { credentialCacheSize } from '../../shared/auth/authenticate.js';
import { EngineTimeoutError } from '../../shared/engines/engine-errors.js';
import type { QueryEngine } from '../../shared/engines/engine.js';
import { installEngine } from '../../shared/engines/registry.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { enterRequest, MAX_RUNNING_PER_KEY, MAX_WAITING_PER_KEY } from '../../shared/limits/concurrency.js';
import { timeZoneCacheSize } from '../../shared/time/time-zone.js';
import { expectErrorResponse } from '../support/http-assertions.js';
import { largePayments } from '../support/large-payments.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// What a hostile collector or client found once, each pinned: one poison line, a repeated import, input ordered to
// multiply files, oversized or duplicated request arrays, cache-filling spellings and tokens, text the store could
// not keep exactly, a malformed request target, overlong ids, slow queries and a copied data folder.

const DOMAIN = 'hostile.test';
const pageview = {
  domain: DOMAIN,
  type: 'pageview',
  visitor_id: 'v1',
  session_id: 's1',
  url_path: '/',
  timestamp: '2026-03-01T10:00:00Z',
};

let api: TestApi;
let token: string;
const temp: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'hostile-'));
  temp.push(dir);
  return dir;
};

beforeAll(async () => {
  api = await startTestApi();
  token = (await api.createKey({ domains: [DOMAIN] })).token;
  expect((await api.importEvents([pageview, { ...pageview, visitor_id: 'v2', session_id: 's2' }])).rejected).toEqual(
    [],
  );
});
afterAll(async () => {
  installEngine(api.engine);
  await api?.close();
  for (const dir of temp) rmSync(dir, { recursive: true, force: true });
});

const totals = () =>
  api.request('POST', '/v1/query', {
    token,
    body: { domain: DOMAIN, date_range: ['2026-03-01', '2026-03-01'], metrics: ['pageviews'] },
  });

describe('one poison line', () => {
  it('a year past 9999 in an offset instant is rejected with its reason, and every domain keeps answering', async () => {
    const report = await api.importEvents([
      { ...pageview, domain: 'other.test', timestamp: '9999-12-31T23:30:00-01:00' },
    ]);
    expect(report.rowsWritten).toBe(0);
    expect(report.rejected[0]!.reason).toMatch(/timestamp .* lies outside 1970-01-01 to 2099-12-31/);
    const res = await totals();
    expect(res.status).toBe(200);
    expect(res.body.data[0].metrics.pageviews).toBe(2);
  });

  it('years 0000 to 0099 get the window as their reason, not "not a real date"', async () => {
    const report = await importEvents([{ ...pageview, timestamp: '0050-06-01T00:00:00Z' }], localPaths(tempDir()));
    expect(report.rejected[0]!.reason).toMatch(/lies outside/);
  });

  it('a partition folder no writer makes is left out of the next snapshot, so queries of every domain go on', async () => {
    const junk = join(api.paths.eventsDir, 'domain=other.test', 'dt=+010000-01');
    mkdirSync(junk, { recursive: true });
    cpSync(join(api.paths.eventsDir, parquetFilesUnder(api.paths.eventsDir)[0]!), join(junk, 'x.parquet'));
    await backfillDerived(api.paths);
    expect(existsSync(join(api.paths.eventsDir, 'domain=other.test', 'dt=+010000-01'))).toBe(false);
    expect((await totals()).status).toBe(200);
  });
});

describe('imports', () => {
  it('of the same file twice add nothing the second time, say so, and count usage once', async () => {
    const paths = localPaths(tempDir());
    const dynamo = await openLocalDynamo(paths, { publish: false });
    try {
      const file = join(paths.dataDir, 'in.ndjson');
      writeFileSync(file, [pageview, { ...pageview, visitor_id: 'v9' }].map((e) => JSON.stringify(e)).join('\n'));
      const first = await importNdjson(file, paths);
      const second = await importNdjson(file, paths);
      expect(first).toMatchObject({ rowsWritten: 2, alreadyImported: false });
      expect(second).toMatchObject({ rowsWritten: 0, alreadyImported: true, files: 0 });
      expect(parquetFilesUnder(paths.eventsDir)).toHaveLength(1);
      expect(await readUsage(DOMAIN)).toBe(2);
    } finally {
      await dynamo.close();
      await openLocalDynamo(api.paths, { publish: false });
    }
  });

  it('write one file per partition whatever the order of the input: 200 domains x 100 time-ordered rows', async () => {
    const paths = localPaths(tempDir());
    const rows = Array.from({ length: 100 }, (_, minute) =>
      Array.from({ length: 200 }, (_, d) => ({
        ...pageview,
        domain: `d${d}.test`,
        timestamp: new Date(Date.parse('2026-03-01T00:00:00Z') + minute * 60_000).toISOString(),
      })),
    ).flat();
    const report = await importEvents(rows, paths, { batchRows: 1_000 });
    expect(report.rowsWritten).toBe(20_000);
    expect(report.files).toBe(200);
    expect(parquetFilesUnder(paths.eventsDir)).toHaveLength(200);
  }, 120_000);

  it('reject text the store could not keep exactly, naming the line and the field', async () => {
    const dir = tempDir();
    const file = join(dir, 'bad.ndjson');
    const event = (extra: string) =>
      `{"domain":"${DOMAIN}","type":"event","visitor_id":"v","session_id":"s","event_name":"e","timestamp":"2026-03-01T10:00:00Z"${extra}}`;
    const lines = [
      Buffer.from(event(',"event_properties":{"k":"\\ud800"}')),
      Buffer.from(event(',"url_path":"/a\\u0000b"')),
      Buffer.from(event(',"event_properties":{"__proto__":"x"}')),
      Buffer.from(event(',"event_properties":{"n":1e309}')),
      Buffer.concat([Buffer.from(event(',"city":"')), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]).subarray(0, -1),
      Buffer.from(event('')),
    ];
    writeFileSync(file, Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')])));
    const report = await importNdjson(file, localPaths(tempDir()));
    expect(report.rowsWritten).toBe(1);
    expect(report.rejected.map((r) => r.line)).toEqual([1, 2, 3, 4, 5]);
    const reasons = report.rejected.map((r) => r.reason);
    expect(reasons[0]).toMatch(/event_properties\.k must be valid Unicode/);
    expect(reasons[1]).toMatch(/url_path must not contain NUL/);
    expect(reasons[2]).toMatch(/key "__proto__" must be a plain name/);
    expect(reasons[3]).toMatch(/event_properties\.n must be a finite number/);
    expect(reasons[4]).toMatch(/not valid UTF-8/);
  });

  it("refuse one visitor's revenue past the 64-bit range in a day whole, naming visitor and day; compaction leaves such a partition as it is", async () => {
    const whale = 'whale.test';
    const payments = (from: number, count: number, day: string) =>
      largePayments({ domain: whale, day, count, from, visitor: () => 'big spender' });
    const paths = localPaths(tempDir());
    // 1,100 payments of 2^53 - 1 cents: about 9.9e18, past 2^63 - 1 for the one visitor of that day.
    await expect(importEvents(payments(0, 1100, '2026-03-05'), paths)).rejects.toThrow(
      /revenue past the 64-bit range for visitor big spender on 2026-03-05: one visitor's revenue/,
    );
    expect(parquetFilesUnder(paths.eventsDir)).toEqual([]);
    // In two imports each day's sum fits; compacted, it would not: that partition keeps its files, the next is compacted.
    for (const half of [0, 600])
      for (const day of ['2026-03-05', '2026-03-06'])
        expect((await importEvents(payments(half, day === '2026-03-05' ? 600 : 2, day), paths)).rejected).toEqual([]);
    expect(await compactStore(paths, { compactFrom: 2 })).toBe(1);
    const files = parquetFilesUnder(paths.eventsDir).map((name) => name.split('/').slice(0, 2).join('/'));
    expect(files.sort()).toEqual([
      'domain=whale.test/dt=2026-03-05',
      'domain=whale.test/dt=2026-03-05',
      'domain=whale.test/dt=2026-03-06',
    ]);
    // Every payment is kept: the stored rows sum exactly (the engines' sums are compared in trino-differential).
    const db = await DuckDBInstance.create(':memory:');
    const connection = await db.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT sum(amount_cents) AS total, count(*) AS n FROM read_parquet('${paths.eventsDir}/**/*.parquet')`,
      );
      expect(reader.getRowObjectsJS()).toEqual([{ total: BigInt(Number.MAX_SAFE_INTEGER) * 1204n, n: 1204n }]);
    } finally {
      connection.closeSync();
      db.closeSync();
    }
  });

  it('leave no staging behind a killed one: the next import removes what a dead process staged', async () => {
    const paths = localPaths(tempDir());
    const stale = join(paths.stagingDir, '4194303-import-dead');
    mkdirSync(join(stale, 'events'), { recursive: true });
    writeFileSync(join(stale, 'events', 'x.parquet'), 'partial');
    await importEvents([pageview], paths);
    expect(readdirSync(paths.stagingDir)).toEqual([]);
  });
});

describe('requests', () => {
  it('a metrics array of a megabyte is a 400 with a small body, and duplicates are refused', async () => {
    const metrics = Array.from({ length: 120_000 }, () => 'nope!');
    const res = await api.request('POST', '/v1/query', { token, body: { domain: DOMAIN, metrics } });
    expectErrorResponse(res, 400, 'invalid_request');
    expect(JSON.stringify(res.body).length).toBeLessThan(10_000);
    const twice = await api.request('POST', '/v1/query', {
      token,
      body: { domain: DOMAIN, metrics: ['visitors', 'visitors'] },
    });
    expectErrorResponse(twice, 400, 'invalid_request');
    expect(twice.body.message).toMatch(/must not repeat a metric/);
  });

  it('time-zone spellings and junk tokens cannot grow the caches', async () => {
    const zone = 'America/New_York';
    // A key of its own: these requests are over one key's rate limit, which the later tests must not meet.
    const { token } = await api.createKey({ domains: [DOMAIN] });
    for (let i = 0; i < 90; i++) {
      const spelling = [...zone].map((c, j) => ((i >> (j % 9)) & 1 ? c.toUpperCase() : c.toLowerCase())).join('');
      await api.request('POST', '/v1/query', {
        token,
        body: { domain: DOMAIN, timezone: spelling, metrics: ['nope'] },
      });
      await api.request('GET', '/v1/events', { token: `junk${'x'.repeat(16_000)}${i}` });
    }
    expect(timeZoneCacheSize().formatters).toBeLessThan(5);
    expect(credentialCacheSize()).toBeLessThan(10);
  });

  it('a request target no URL can hold is a 400, not a 500', async () => {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(api.url);
      const req = httpRequest({ host: url.hostname, port: url.port, path: 'http://[', method: 'GET' }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(400);
    expect(JSON.parse(body)).toMatchObject({ error: 'invalid_request' });
  });

  it('an annotation id longer than DynamoDB keys hold is a 400', async () => {
    const res = await api.request('DELETE', `/v1/annotations/${'a'.repeat(129)}`, { token, query: { domain: DOMAIN } });
    expectErrorResponse(res, 400, 'invalid_request');
  });

  it('a query past the local time limit is interrupted: 504, and the engine answers the next one', async () => {
    const saved = process.env.DUCKDB_QUERY_TIMEOUT_MS;
    process.env.DUCKDB_QUERY_TIMEOUT_MS = '200';
    try {
      const slow = { sql: 'SELECT count(*) AS n FROM range(3000000000) t(x) WHERE x % 7 = 3', params: [] };
      await expect(api.engine.run(slow)).rejects.toBeInstanceOf(EngineTimeoutError);
    } finally {
      if (saved === undefined) delete process.env.DUCKDB_QUERY_TIMEOUT_MS;
      else process.env.DUCKDB_QUERY_TIMEOUT_MS = saved;
    }
    expect((await totals()).status).toBe(200);
  });

  it(`one key runs at most ${MAX_RUNNING_PER_KEY} requests at once, the rest wait their turn; another key is not held up`, async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const held: QueryEngine = {
      target: api.engine.target,
      billedPerStatement: api.engine.billedPerStatement,
      run: async (q) => {
        started += 1;
        await gate;
        return api.engine.run(q);
      },
    };
    installEngine(held);
    try {
      const { token } = await api.createKey({ domains: [DOMAIN] });
      const body = { domain: DOMAIN, date_range: ['2026-03-01', '2026-03-01'], metrics: ['pageviews'] };
      const pending = Array.from({ length: MAX_RUNNING_PER_KEY + 6 }, () =>
        api.request('POST', '/v1/query', { token, body }),
      );
      await vi.waitFor(() => expect(started).toBe(MAX_RUNNING_PER_KEY));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(started).toBe(MAX_RUNNING_PER_KEY);
      // Another key's request reaches the engine while the first key's wait.
      const other = (await api.createKey({ domains: [DOMAIN] })).token;
      const otherRequest = api.request('POST', '/v1/query', { token: other, body });
      await vi.waitFor(() => expect(started).toBe(MAX_RUNNING_PER_KEY + 1));
      release();
      expect((await otherRequest).status).toBe(200);
      for (const res of await Promise.all(pending)) expect(res.status).toBe(200);
    } finally {
      release();
      installEngine(api.engine);
    }
  });
});

describe('the per-key queue', () => {
  it(`refuses with a 429 past ${MAX_WAITING_PER_KEY} waiting requests, and hands each released slot to the next`, async () => {
    const releases = await Promise.all(Array.from({ length: MAX_RUNNING_PER_KEY }, () => enterRequest('queue-test')));
    const waiting = Array.from({ length: MAX_WAITING_PER_KEY }, () => enterRequest('queue-test'));
    await expect(enterRequest('queue-test')).rejects.toMatchObject({ status: 429, headers: { 'retry-after': '1' } });
    releases[0]!();
    const next = await waiting[0]!;
    expect(typeof next).toBe('function');
    for (const release of [...releases.slice(1), next]) release();
    // Each released slot goes to the next waiting request in turn, until none waits.
    for (const turn of waiting.slice(1)) (await turn)();
  });
});

describe('a data folder copied while its server runs', () => {
  it('serves its own DynamoDB instead of writing into the original', async () => {
    const copy = tempDir();
    cpSync(api.paths.dataDir, copy, { recursive: true, verbatimSymlinks: true });
    const dynamo = await openLocalDynamo(localPaths(copy), { publish: false });
    try {
      expect(dynamo.owner).toBe(true);
      expect(dynamo.endpoint).not.toBe(api.dynamo.endpoint);
    } finally {
      await dynamo.close();
      await openLocalDynamo(api.paths, { publish: false });
    }
  });
});
