import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../local/tools/local-process.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitRequest, readUsage, recordImportedEvents } from '../../shared/limits/limiter.js';
import { RateLimitedError } from '../../shared/errors.js';
import type { QueryEngine } from '../../shared/engines/engine.js';
import { installEngine } from '../../shared/engines/registry.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Rate and usage limits live in DynamoDB (dynalite here), so they hold across processes.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const annotations = (token: string, domain = 'rate.test') =>
  api.request('GET', '/v1/annotations', { token, query: { domain } });

describe('rate limit: 100 requests per minute per key', () => {
  it('105 concurrent requests on one key give exactly 100 successes and 5 × 429', async () => {
    const { token } = await api.createKey({ domains: ['rate.test'] });
    await awayFromWindowEdge();
    const responses = await Promise.all(Array.from({ length: 105 }, () => annotations(token)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    const limited = responses.filter((r) => r.status === 429);
    expect(limited).toHaveLength(5);
    for (const r of limited) {
      expect(r.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(new Set(remaining).size).toBe(100);
    expect(Math.min(...remaining)).toBe(0);
  });

  it('every answer to an authenticated request carries the headers, errors included', async () => {
    const { token } = await api.createKey({ domains: ['headers.test'] });
    for (const res of [
      await annotations(token, 'headers.test'),
      await annotations(token, 'elsewhere.test'),
      await api.request('POST', '/v1/query', { token, rawBody: '{' }),
    ]) {
      expect(res.headers.get('x-ratelimit-limit')).toBe('100');
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThanOrEqual(0);
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      expect(reset % 60).toBe(0);
      expect(reset * 1000).toBeGreaterThan(Date.now());
    }
  });

  it('the window resets after a minute', async () => {
    const credential = {
      keyId: 'windowtest000001',
      type: 'project' as const,
      domains: ['w.test'],
      scopes: [],
      owner: 'o',
      eventLimit: 10,
      createdAt: '',
    };
    const t = Date.UTC(2030, 0, 1, 12, 0, 10);
    for (let i = 0; i < 100; i++) await admitRequest(credential, t);
    await expect(admitRequest(credential, t + 30_000)).rejects.toBeInstanceOf(RateLimitedError);
    await expect(admitRequest(credential, t + 50_000)).resolves.toMatchObject({ 'x-ratelimit-remaining': '99' });
  });

  it('two server processes sharing one DynamoDB agree on the count', async () => {
    const { token } = await api.createKey({ domains: ['shared.test'] });
    const other = await startSecondServer(api.paths.dataDir);
    await awayFromWindowEdge();
    try {
      const first = await Promise.all(Array.from({ length: 60 }, () => annotations(token, 'shared.test')));
      const second = await Promise.all(
        Array.from({ length: 60 }, () =>
          fetch(`${other.url}/v1/annotations?domain=shared.test`, { headers: { authorization: `Bearer ${token}` } }),
        ),
      );
      const ok = first.filter((r) => r.status === 200).length + second.filter((r) => r.status === 200).length;
      expect(ok).toBe(100);
      expect(second.filter((r) => r.status === 429).length + first.filter((r) => r.status === 429).length).toBe(20);
    } finally {
      other.process.kill('SIGINT');
    }
  });
});

describe('work done while the limits are read', () => {
  const query = (token: string) =>
    api.request('POST', '/v1/query', {
      token,
      body: { domain: 'work.test', date_range: ['2026-03-01', '2026-03-01'], metrics: ['pageviews'] },
    });

  /** The installed engine, counting the statements it starts and claiming `billedPerStatement`. */
  function countingEngine(billedPerStatement: boolean): { engine: QueryEngine; started: () => number } {
    const inner = api.engine;
    let started = 0;
    const engine: QueryEngine = {
      target: inner.target,
      billedPerStatement,
      run: (q) => {
        started += 1;
        return inner.run(q);
      },
    };
    return { engine, started: () => started };
  }

  it.each([
    { billed: false, refusedRun: true },
    { billed: true, refusedRun: false },
  ])(
    'reads refused by the rate limit answer 429, and start statements only where they are not billed (billed: $billed)',
    async ({ billed, refusedRun }) => {
      const { engine, started } = countingEngine(billed);
      installEngine(engine);
      try {
        const { token } = await api.createKey({ domains: ['work.test'] });
        await awayFromWindowEdge();
        const usageBefore = await readUsage('work.test');
        const responses = await Promise.all(Array.from({ length: 103 }, () => query(token)));
        expect(responses.map((r) => r.status).sort()).toEqual([...Array(100).fill(200), ...Array(3).fill(429)]);
        for (const r of responses.filter((x) => x.status === 429))
          expect(r.body).toEqual({ error: 'rate_limited', message: expect.any(String) });
        // One statement per query (an explicit range needs no first event).
        expect(started()).toBe(refusedRun ? 103 : 100);
        expect((await readUsage('work.test')) - usageBefore).toBe(100);
      } finally {
        installEngine(api.engine);
      }
    },
  );

  it('writes refused by the rate limit change nothing', async () => {
    const { token } = await api.createKey({ domains: ['write.test'], scopes: ['analytics:read', 'analytics:write'] });
    await awayFromWindowEdge();
    const responses = await Promise.all(
      Array.from({ length: 103 }, (_, i) =>
        api.request('POST', '/v1/annotations', {
          token,
          body: { domain: 'write.test', date: '2026-03-01', title: `note ${i}` },
        }),
      ),
    );
    expect(responses.filter((r) => r.status === 429)).toHaveLength(3);
    const created = responses.filter((r) => r.status === 201).length;
    expect(created).toBe(100);
    const { token: reader } = await api.createKey({ domains: ['write.test'] });
    const listed = await api.request('GET', '/v1/annotations', { token: reader, query: { domain: 'write.test' } });
    expect(listed.status).toBe(200);
    expect((listed.body as { data: unknown[] }).data).toHaveLength(100);
  });
});

describe('ANALYTICS_RATE_LIMIT_PER_MINUTE (for a contract fuzzer on a local server)', () => {
  it('a value that is not a whole number from 1 to 1000000 stops the start with the reason', async () => {
    for (const value of ['0', '1.5', 'many', '1000001']) {
      process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE = value;
      try {
        await expect(startTestApi(), value).rejects.toThrow(
          'ANALYTICS_RATE_LIMIT_PER_MINUTE must be a whole number from 1 to 1000000',
        );
      } finally {
        delete process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
      }
    }
  });

  it('raises the limit the headers announce', async () => {
    const { token } = await api.createKey({ domains: ['rate.test'] });
    process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE = '250';
    try {
      expect((await annotations(token)).headers.get('x-ratelimit-limit')).toBe('250');
    } finally {
      delete process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
    }
    expect((await annotations(token)).headers.get('x-ratelimit-limit')).toBe('100');
  });
});

describe('usage limit: the plan event limit per domain and calendar month', () => {
  it('imported events and API calls count; the call past the limit is 403 usage_limit_exceeded', async () => {
    const { token } = await api.createKey({ domains: ['usage.test'], eventLimit: 5 });
    await recordImportedEvents('usage.test', 3);
    expect((await annotations(token, 'usage.test')).status).toBe(200);
    expect((await annotations(token, 'usage.test')).status).toBe(200);
    const over = await annotations(token, 'usage.test');
    expect(over.status).toBe(403);
    expect(over.body).toEqual({ error: 'usage_limit_exceeded', message: expect.stringContaining('5') });
    expect(await readUsage('usage.test')).toBe(5);
  });

  it('a request refused by the rate limit does not use up the plan', async () => {
    const { token } = await api.createKey({ domains: ['refund.test'] });
    await awayFromWindowEdge();
    const responses = await Promise.all(Array.from({ length: 103 }, () => annotations(token, 'refund.test')));
    const served = responses.filter((r) => r.status === 200).length;
    expect(await readUsage('refund.test')).toBe(served);
  });

  it('the limits cost one round trip: the rate and usage updates are in flight together', async () => {
    const { token } = await api.createKey({ domains: ['trips.test'] });
    await annotations(token, 'trips.test'); // warms the credential cache
    const log: { name: string; start: number; end: number }[] = [];
    const client = documentClient();
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const entry = { name: String(context.commandName), start: performance.now(), end: 0 };
        try {
          return await next(args);
        } finally {
          entry.end = performance.now();
          log.push(entry);
        }
      },
      { step: 'initialize', name: 'roundTripProbe' },
    );
    try {
      await annotations(token, 'trips.test');
    } finally {
      client.middlewareStack.remove('roundTripProbe');
    }
    const updates = log.filter((e) => /^Update(Item)?Command$/.test(e.name));
    expect(updates).toHaveLength(2);
    const [a, b] = updates.sort((x, y) => x.start - y.start) as [(typeof updates)[0], (typeof updates)[0]];
    expect(b.start).toBeLessThan(a.end); // overlapping, not one after the other
  });
});

/** Windows are fixed minutes: a burst that straddles two would see two budgets, so wait for a fresh one. */
async function awayFromWindowEdge(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 200));
}

async function startSecondServer(dataDir: string): Promise<{ url: string; process: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/start.ts'], {
    env: { ...process.env, ANALYTICS_DATA_DIR: dataDir, PORT: String(port), ANALYTICS_DEMO: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let errors = '';
    child.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const timer = setTimeout(() => reject(new Error('second server did not start')), 30_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`second server exited with ${code}: ${errors.slice(-2000)}`)));
  });
  return { url: `http://127.0.0.1:${port}`, process: child };
}
