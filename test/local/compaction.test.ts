import { readdirSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfillDerived } from '../../local/store/backfill.js';
import { COMPACT_FROM_FILES } from '../../local/store/compaction.js';
import { importEvents } from '../../local/store/local-destination.js';
import { localCatalog } from '../../shared/query/sql/catalog.js';
import { localTarget } from '../../shared/query/sql/target.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import { planAnalyticsQuery } from '../../shared/query/analytics/plan.js';
import { generatedEvents, queryArbitrary } from '../support/generated-sessions.js';
import { filesPerPartition } from '../support/partition-files.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Compaction (local/store/compaction.ts) must change nothing a query can see: a store imported in many small
// batches, as an hourly feed writes it, answers the same before and after its partitions become one file each.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  // Imports of 40 rows each, as an hourly feed writes them: most partitions get many files, and sessions are
  // split across them.
  const events = generatedEvents();
  for (let from = 0; from < events.length; from += 40) await importEvents(events.slice(from, from + 40), api.paths);
}, 120_000);
afterAll(() => api?.close());

const files = (dir: string) =>
  (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.parquet')).sort();

const count = async (sql: string) => Number(Object.values((await api.engine.runRaw(sql))[0]!)[0]);

describe('compaction', () => {
  it('rewrites each partition of many files as one, with the same answers, visitor keys and exact whole marks', async () => {
    const queries = fc.sample(queryArbitrary, { numRuns: 60, seed: 11 });
    const answers = () =>
      Promise.all(
        queries.map(
          async (q) =>
            (await api.engine.run(printAnalyticsQuery(planAnalyticsQuery(q, localCatalog), localTarget))).rows,
        ),
      );
    const keysSql = `SELECT DISTINCT visitor_id, visitor_key FROM pageview_buckets ORDER BY 1`;
    const splitSql = `SELECT count(*) FROM (SELECT session_id FROM session_fragments GROUP BY session_id, dt HAVING count(*) > 1)`;
    const before = {
      answers: await answers(),
      keys: await api.engine.runRaw(keysSql),
      whole: await count(`SELECT count(*) FROM session_fragments WHERE whole`),
    };
    expect(Math.max(...filesPerPartition(api.paths.eventsDir))).toBeGreaterThanOrEqual(COMPACT_FROM_FILES);
    expect(await count(splitSql)).toBeGreaterThan(20);

    await backfillDerived(api.paths);

    for (const dir of [api.paths.eventsDir, ...Object.values(api.paths.derivedDirs)]) {
      expect(filesPerPartition(dir).every((n) => n < COMPACT_FROM_FILES)).toBe(true);
      expect(files(dir)).toEqual(files(api.paths.eventsDir));
    }
    // Each rewritten file is in the order every writer gives event files (writer/event-file-layout.ts).
    expect(
      await count(`
      SELECT count(*) FROM (
        SELECT file_row_number, row_number() OVER (PARTITION BY filename ORDER BY type, event_name, session_id, ts, file_row_number) - 1 AS ordered
        FROM read_parquet('${api.paths.eventsDir}/*/*/*.parquet', filename = true, file_row_number = true, hive_partitioning = false))
      WHERE file_row_number <> ordered`),
    ).toBe(0);
    expect(await answers()).toEqual(before.answers);
    for (const [i, q] of queries.entries()) {
      const raw = await api.engine.run(
        printAnalyticsQuery(
          planAnalyticsQuery(q, localCatalog, {
            sessionFragments: false,
            pageviewBuckets: false,
            customEventBuckets: false,
          }),
          localTarget,
        ),
      );
      expect(raw.rows).toEqual(before.answers[i]);
    }
    expect(await api.engine.runRaw(keysSql)).toEqual(before.keys);
    // A session's rows of one day are one fragment now, marked whole when the session has no other day.
    expect(await count(splitSql)).toBe(0);
    expect(
      await count(`
      WITH n AS (SELECT session_id, count(*) AS fragments, count(*) FILTER (WHERE whole) AS whole FROM session_fragments GROUP BY 1)
      SELECT count(*) FILTER (WHERE (fragments = 1) <> (whole = 1) OR (fragments > 1 AND whole > 0)) FROM n`),
    ).toBe(0);
    expect(await count(`SELECT count(*) FROM session_fragments WHERE whole`)).toBeGreaterThan(before.whole);
  }, 240_000);

  it('leaves partitions of fewer files alone, and a compacted store as it is', async () => {
    const names = files(api.paths.eventsDir);
    await backfillDerived(api.paths);
    expect(files(api.paths.eventsDir)).toEqual(names);
  });
});
