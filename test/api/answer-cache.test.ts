import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import {
  forgetSuperseded,
  hideFiles,
  readFileStates,
  showFiles,
  supersede,
} from '../../shared/store/file-states-repo.js';

// The answer cache on DuckDB (shared/store/answer-cache-repo.ts): a repeat request over unchanged data starts no
// statement and answers the same; an import publishes a new snapshot, and the next request computes afresh; one
// domain's answers never answer another's identical request.

let api: TestApi;
let token: string;
const other = 'other-site.test';

beforeAll(async () => {
  api = await startTestApi();
  await api.importEvents(journeyEvents);
  await api.importEvents(journeyEvents.slice(0, 40).map((e) => ({ ...(e as object), domain: other })));
  token = (await api.createKey({ type: 'personal', domains: ['journeys.test', other] })).token;
});
afterAll(async () => api?.close());

const body = (domain: string) => ({
  domain,
  metrics: ['visitors', 'pageviews', 'bounce_rate'],
  dimensions: ['page'],
  date_range: JOURNEYS_RANGE,
});
const ask = async (domain: string) => {
  const res = await api.request('POST', '/v1/query', { token, body: body(domain) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { data: unknown[]; meta: Record<string, unknown> };
};

describe('the answer cache', () => {
  it('answers a repeat without a statement, and a request after an import afresh', async () => {
    const run = vi.spyOn(api.engine, 'run');
    try {
      const first = await ask('journeys.test');
      const statements = run.mock.calls.length;
      expect(statements).toBeGreaterThan(0);
      const repeat = await ask('journeys.test');
      expect(run.mock.calls.length).toBe(statements);
      expect(repeat.data).toEqual(first.data);

      const visitor = {
        domain: 'journeys.test',
        timestamp: '2026-05-05T12:00:00Z',
        type: 'pageview',
        visitor_id: 'v-after-cache',
        session_id: 's-after-cache',
        url_path: '/after-cache',
      };
      await api.importEvents([visitor]);
      const after = await ask('journeys.test');
      expect(run.mock.calls.length).toBeGreaterThan(statements);
      expect(after.data).toContainEqual(expect.objectContaining({ dimensions: { page: '/after-cache' } }));
    } finally {
      run.mockRestore();
    }
  });

  it('keeps each domain to its own answers', async () => {
    const mine = await ask('journeys.test');
    const theirs = await ask(other);
    expect(theirs.data).not.toEqual(mine.data);
    expect(await ask(other)).toMatchObject({ data: theirs.data });
  });

  it('is off with ANALYTICS_ANSWER_CACHE=off: every request runs its statements', async () => {
    await ask('journeys.test');
    const run = vi.spyOn(api.engine, 'run');
    process.env.ANALYTICS_ANSWER_CACHE = 'off';
    try {
      await ask('journeys.test');
      expect(run).toHaveBeenCalled();
    } finally {
      delete process.env.ANALYTICS_ANSWER_CACHE;
      run.mockRestore();
    }
  });

  it("on S3 keys answers by the domain's file states, whose version every write moves (also one of 500 files)", async () => {
    const domain = 'versions.test';
    const versions = [(await readFileStates(domain)).version];
    const files = Array.from(
      { length: 500 },
      (_, i) => `dt=2026-05-0${1 + (i % 9)}/import-${String(i).padStart(4, '0')}.parquet`,
    );
    const moved = async () => {
      versions.push((await readFileStates(domain)).version);
      expect(versions.at(-1)!).toBeGreaterThan(versions.at(-2)!);
    };
    await hideFiles(domain, files);
    await moved();
    await showFiles(domain, files);
    await moved();
    expect(
      await supersede(domain, 'dt=2026-05-01', {
        file: 'compacted-1.parquet',
        replaces: ['a.parquet'],
        since: Date.now(),
      }),
    ).toBe(true);
    await moved();
    await forgetSuperseded(domain, 'dt=2026-05-01', 'compacted-1.parquet');
    await moved();
  });
});
