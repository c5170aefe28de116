import { mkdirSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { localBatchSink } from '../../local/collect/batch-sink.js';
import type { LocalPaths } from '../../local/store/paths.js';
import { logger } from '../../shared/log.js';
import { queryParquet, sqlPath } from '../support/parquet-rows.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The collector's local sink (local/collect/batch-sink.ts) with a batch that cannot be imported: it stays on disk,
// holds back no other batch, and is tried again after pauses that double, each failure logged once.

// The API's store and local DynamoDB (imports count usage there); the sink under test is one of its own on the same
// folder, as a second process's would be.
let api: TestApi;
let paths: LocalPaths;
let dataDir: string;
beforeAll(async () => {
  api = await startTestApi();
  paths = api.paths;
  dataDir = api.dataDir;
});
afterAll(async () => api?.close());
afterEach(() => vi.restoreAllMocks());

const line = (path: string) =>
  JSON.stringify({
    domain: 'sink.test',
    timestamp: '2026-11-20T12:00:00Z',
    type: 'pageview',
    visitor_id: 'v-1',
    session_id: `s-${path}`,
    url_path: path,
  });

async function storedPaths(): Promise<string[]> {
  const files = join(paths.currentLink, 'events', 'domain=sink.test');
  if (!existsSync(files)) return [];
  const rows = await queryParquet(`SELECT url_path FROM read_parquet(${sqlPath(join(files, '**', '*.parquet'))})`);
  return rows.map((r) => String(r.url_path)).sort();
}

describe('a collected batch that cannot be imported', () => {
  it('stays on disk, holds back no other batch, and is tried again after doubling pauses, logged once each', async () => {
    let clock = 1_000_000;
    const flushMs = 100; // first pause: 5 x 100 ms
    const sink = localBatchSink(paths, flushMs, () => clock);
    const errors = vi.spyOn(logger, 'error');
    const failing = join(dataDir, 'collected', '000000000000001-aaaaaaaaaaaa.ndjson');
    mkdirSync(failing); // a folder where a batch file should be: its import fails
    try {
      await sink.write([line('/first')]);
      await sink.flush();
      expect(await storedPaths()).toEqual(['/first']);
      const failures = () => errors.mock.calls.filter(([message]) => String(message).includes('could not be imported'));
      expect(failures()).toHaveLength(1);
      expect(failures()[0]![1]).toMatchObject({ file: '000000000000001-aaaaaaaaaaaa.ndjson', failures: 1 });

      // Before its pause is over it is not tried again, while new batches are imported.
      await sink.write([line('/second')]);
      await sink.flush();
      expect(await storedPaths()).toEqual(['/first', '/second']);
      expect(failures()).toHaveLength(1);

      clock += 500;
      await sink.flush();
      expect(failures()).toHaveLength(2);
      expect(failures()[1]![1]).toMatchObject({ failures: 2, next_try_in_s: 1 });

      // Readable again: imported at its next try, and gone from the folder.
      rmSync(failing, { recursive: true });
      writeFileSync(failing, `${line('/mended')}\n`);
      clock += 1_000;
      await sink.flush();
      expect(failures()).toHaveLength(2);
      expect(await storedPaths()).toEqual(['/first', '/mended', '/second']);
      expect(readdirSync(join(dataDir, 'collected')).filter((f) => !f.startsWith('.'))).toEqual([]);
    } finally {
      await sink.close();
      rmSync(failing, { recursive: true, force: true });
    }
  });

  it("never delays newly written events behind a failed batch's long pause", async () => {
    let clock = 1_000_000;
    const flushMs = 100;
    const sink = localBatchSink(paths, flushMs, () => clock);
    vi.spyOn(logger, 'error');
    const failing = join(dataDir, 'collected', '000000000000002-bbbbbbbbbbbb.ndjson');
    mkdirSync(failing);
    try {
      // Six failures: its next try is 5 x 100 ms x 2^5 = 16 s away, in real time too.
      for (let i = 0; i < 6; i++) {
        await sink.flush();
        clock += 60_000;
      }
      // The rounds the first failures scheduled (0.5 s and on) run and find nothing due: the long pause's round is
      // the one left pending.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const written = Date.now();
      await sink.write([line('/while-waiting')]); // no flush by hand: the sink's own round imports it
      while (!(await storedPaths()).includes('/while-waiting')) {
        expect(Date.now() - written, 'imported by the next round, not after the pause').toBeLessThan(8_000);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await sink.close();
      rmSync(failing, { recursive: true, force: true });
    }
  });
});
