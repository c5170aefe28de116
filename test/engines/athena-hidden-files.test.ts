import { writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hideFiles, READ_MAX_MS, supersede } from '../../shared/store/file-states-repo.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// Files the domain's state hides are never opened by the Athena engine's statements (on Trino 476, the engine of
// Athena v3): a replaced file that upkeep deletes while a query runs, or a compacted file of a run that died, is
// left out by its whole "$path", which Trino applies when it lists the splits. Shown with files that are not
// Parquet at all: opening one fails the statement.

const available = trinoAvailable('the hidden-files suite');
const runIf = available ? describe : describe.skip;
let api: TestApi;
let token: string;

beforeAll(async () => {
  if (!available) return;
  api = await startTestApi({ engine: 'trino' });
  await api.importEvents(journeyEvents);
  token = (await api.createKey({ domains: ['journeys.test'] })).token;
}, 300_000);
afterAll(async () => api?.close());

runIf('hidden files on the Athena path', () => {
  it('a repeat starts no statement, and the request after an import answers with it (no reused result of the old data)', async () => {
    const engine = api.trino!.engine;
    const ask = async () => {
      const res = await api.request('POST', '/v1/query', {
        token,
        body: { domain: 'journeys.test', metrics: ['visitors'], dimensions: ['page'], date_range: JOURNEYS_RANGE },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data as unknown[];
    };
    const run = vi.spyOn(engine, 'run');
    try {
      const first = await ask();
      const statements = run.mock.calls.length;
      expect(await ask()).toEqual(first);
      expect(run.mock.calls.length).toBe(statements);
      await api.importEvents([
        {
          domain: 'journeys.test',
          timestamp: '2026-05-05T12:00:00Z',
          type: 'pageview',
          visitor_id: 'v-new',
          session_id: 's-new',
          url_path: '/after-import',
        },
      ]);
      expect(await ask()).toContainEqual(expect.objectContaining({ dimensions: { page: '/after-import' } }));
    } finally {
      run.mockRestore();
    }
  });

  it('a read of the file states slower than READ_MAX_MS is read again; four slow reads answer 503, never a dated guess', async () => {
    const dynamo = documentClient();
    const send = dynamo.send.bind(dynamo) as (command: unknown) => Promise<unknown>;
    let slow = 0;
    const statesReads: number[] = [];
    const spy = vi.spyOn(dynamo, 'send').mockImplementation((async (command: unknown) => {
      if (command instanceof GetCommand && String(command.input.Key?.pk).startsWith('files#')) {
        statesReads.push(slow);
        if (slow > 0) {
          slow -= 1;
          await new Promise((resolve) => setTimeout(resolve, READ_MAX_MS + 100));
        }
      }
      return send(command);
    }) as typeof dynamo.send);
    const ask = (metrics: string[]) =>
      api.request('POST', '/v1/query', {
        token,
        body: { domain: 'journeys.test', metrics, date_range: JOURNEYS_RANGE },
      });
    try {
      slow = 1;
      const once = await ask(['visitors', 'visits']);
      expect(once.status, JSON.stringify(once.body)).toBe(200);
      expect(statesReads).toEqual([1, 0]);
      statesReads.length = 0;
      slow = 4;
      const never = await ask(['visitors', 'bounce_rate']);
      expect(never.status).toBe(503);
      expect(never.body.error).toBe('service_unavailable');
      expect(never.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(statesReads).toEqual([4, 3, 2, 1]);
    } finally {
      spy.mockRestore();
    }
  });

  it('a replaced file and a pending compacted file are never opened: the answers are those of the store without them', async () => {
    const query = () =>
      api.request('POST', '/v1/query', {
        token,
        body: {
          domain: 'journeys.test',
          metrics: ['visitors', 'pageviews', 'bounce_rate'],
          dimensions: ['page'],
          date_range: JOURNEYS_RANGE,
        },
      });
    const before = await query();
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    const partition = 'dt=2026-05-04';
    const folders = ['events', 'sessions', 'pageviews', 'pages', 'visitors', 'custom_events'];
    for (const folder of folders) {
      const dir = join(api.paths.currentLink, folder, 'domain=journeys.test', partition);
      for (const name of ['replaced.parquet', 'compacted-0123456789abcdef0123456789abcdef.parquet'])
        writeFileSync(join(dir, name), 'not Parquet at all');
    }
    const kept = readdirSync(join(api.paths.currentLink, 'events', 'domain=journeys.test', partition)).find(
      (n) => !/^(replaced|compacted-)/.test(n),
    )!;
    await hideFiles('journeys.test', [`${partition}/compacted-0123456789abcdef0123456789abcdef.parquet`]);
    await supersede('journeys.test', partition, { file: kept, replaces: ['replaced.parquet'], since: Date.now() });
    const after = await query();
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    delete after.body.meta.query_ms;
    delete before.body.meta.query_ms;
    delete after.body.meta.bytes_scanned;
    delete before.body.meta.bytes_scanned;
    expect(after.body).toEqual(before.body);
  });
});
