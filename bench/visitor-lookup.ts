// Measures what a one-visitor journeys query costs under two Parquet layouts of the same rows:
//   by-ts       each dt partition one file ordered by ts (what writer/importer.ts writes), default row groups
//   by-visitor  each dt partition one file ordered by visitor_id, small row groups (ROW_GROUP_SIZE below)
//   by-visitor-big-groups  the same order with DuckDB's default row groups (122,880 rows), to show the size matters
// For each layout it reports the files' size, the row groups whose visitor_id min/max statistics cannot rule a
// visitor out (what a statistics-pruning reader such as Athena's must still read), the bytes of those row
// groups, and DuckDB's time for the real timeline and stats queries (shared/query/journeys-visitor-sql.ts).
//
//   npx tsx bench/visitor-lookup.ts [rows=2000000] [days=20] [visitors=100000]
//
// Data lives in a temp folder that is removed at the end.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { DuckDbEngine } from '../shared/engines/duckdb-engine.js';
import { duckdbTypes, eventColumns } from '../shared/events/event-columns.js';
import { planTimeline, visitorScope } from '../shared/query/journeys/plan.js';
import { printTimeline, printVisitorStats } from '../shared/query/journeys/print-visitor.js';
import { addDays, rangeOfDates } from '../shared/time/date-range.js';

const [rows, days, visitors] = [2_000_000, 20, 100_000].map((d, i) => Number(process.argv[2 + i] ?? d)) as [
  number,
  number,
  number,
];
const ROW_GROUP_SIZE = 10_000;
const FIRST_DAY = '2026-01-01';
const DOMAIN = 'bench.test';
const LOOKUPS = 25;

/** Generated values for the columns a journeys query reads; the rest are NULL, typed as the real files. */
const generated: Record<string, string> = {
  ts: `TIMESTAMP '${FIRST_DAY}' + to_days(CAST(i % ${days} AS INTEGER)) + to_milliseconds(CAST(hash(i, 1) % 86400000 AS BIGINT))`,
  type: `CASE WHEN hash(i, 2) % 10 < 8 THEN 'pageview' WHEN hash(i, 2) % 10 = 8 THEN 'event' ELSE 'revenue' END`,
  visitor_id: `md5(CAST(hash(i, 3) % ${visitors} AS VARCHAR))`,
  session_id: `md5(CAST(hash(i, 3) % ${visitors} AS VARCHAR) || CAST(i % ${days} AS VARCHAR))`,
  url_path: `'/page/' || CAST(hash(i, 4) % 200 AS VARCHAR)`,
  referrer_domain: `CASE WHEN hash(i, 5) % 3 = 0 THEN '' ELSE 'site' || CAST(hash(i, 5) % 50 AS VARCHAR) || '.com' END`,
  country: `['US', 'DE', 'GB', 'FR', 'IN'][CAST(hash(i, 6) % 5 AS INTEGER) + 1]`,
  browser: `['Chrome', 'Safari', 'Firefox'][CAST(hash(i, 7) % 3 AS INTEGER) + 1]`,
  os: `['macOS', 'Windows', 'iOS', 'Android'][CAST(hash(i, 8) % 4 AS INTEGER) + 1]`,
  device: `['desktop', 'mobile'][CAST(hash(i, 9) % 2 AS INTEGER) + 1]`,
  scroll_depth: `CAST(hash(i, 10) % 101 AS DOUBLE)`,
  event_name: `'signup'`,
  event_properties: `'{"plan":"pro"}'`,
  amount_cents: `CAST(hash(i, 11) % 10000 AS BIGINT)`,
  is_dev: 'false',
};

const select = eventColumns
  .map(([name, type]) => `CAST(${generated[name] ?? 'NULL'} AS ${duckdbTypes[type]}) AS ${name}`)
  .join(', ');

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'visitor-lookup-'));
  const db = await DuckDBInstance.create(':memory:', { threads: '2' });
  const c = await db.connect();
  try {
    console.log(`generating ${rows} rows, ${days} days, ${visitors} visitors in ${root}`);
    await c.run(`CREATE TABLE gen AS SELECT ${select} FROM range(${rows}) t(i)`);
    const layouts = {
      'by-ts': { order: 'ts', rowGroup: '' },
      'by-visitor': { order: 'visitor_id, ts', rowGroup: `, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}` },
      'by-visitor-big-groups': { order: 'visitor_id, ts', rowGroup: '' },
    };
    for (const [name, layout] of Object.entries(layouts)) {
      for (let d = 0; d < days; d++) {
        const dt = addDays(FIRST_DAY, d);
        const dir = join(root, name, `domain=${DOMAIN}`, `dt=${dt}`);
        mkdirSync(dir, { recursive: true });
        // One ordered COPY per partition: COPY ... PARTITION_BY does not keep the order (docs/STORAGE.md).
        await c.run(`COPY (SELECT * FROM gen WHERE CAST(ts AS DATE) = DATE '${dt}' ORDER BY ${layout.order})
          TO '${join(dir, 'part-0.parquet')}' (FORMAT PARQUET, COMPRESSION ZSTD${layout.rowGroup})`);
      }
    }
    const sample = (
      await c.runAndReadAll(
        `SELECT visitor_id FROM (SELECT DISTINCT visitor_id FROM gen) USING SAMPLE ${LOOKUPS} ROWS (reservoir, 7) ORDER BY 1`,
      )
    )
      .getRows()
      .map((r) => String(r[0]));

    for (const name of Object.keys(layouts)) {
      const glob = join(root, name, '*', '*', '*.parquet');
      const [files, groups, bytes] = (
        await c.runAndReadAll(
          `SELECT count(DISTINCT file_name), count(DISTINCT (file_name, row_group_id)), sum(total_compressed_size) FROM parquet_metadata('${glob}')`,
        )
      )
        .getRows()[0]!
        .map(Number) as [number, number, number];
      const candidates = await Promise.all(sample.map(async (id) => candidateGroups(c, glob, id)));
      const engine = await DuckDbEngine.open(join(root, name));
      const timings = { timeline: [] as number[], stats: [] as number[] };
      for (const id of sample) {
        const range = rangeOfDates(FIRST_DAY, addDays(FIRST_DAY, days - 1), 'UTC');
        timings.timeline.push(
          await timed(() =>
            engine.run(
              printTimeline(
                planTimeline({
                  domain: DOMAIN,
                  isDev: false,
                  visitorId: id,
                  range,
                  includeAutoEvents: false,
                  limit: 100,
                  offset: 0,
                }),
                engine.target,
              ),
            ),
          ),
        );
        timings.stats.push(
          await timed(() => engine.run(printVisitorStats(visitorScope(DOMAIN, id, false, undefined), engine.target))),
        );
      }
      const explain = await engine.runRaw(
        `EXPLAIN ANALYZE SELECT count(*) FROM events WHERE domain = '${DOMAIN}' AND visitor_id = '${sample[0]}'`,
      );
      engine.close();
      console.log(`\n== ${name}: ${files} files, ${groups} row groups, ${mib(bytes)} MiB (column chunks, compressed)`);
      console.log(
        `row groups a visitor's min/max cannot exclude: median ${median(candidates.map((x) => x.groups))} of ${groups}`,
      );
      console.log(`compressed bytes of those row groups: median ${mib(median(candidates.map((x) => x.bytes)))} MiB`);
      console.log(
        `DuckDB p50 over ${LOOKUPS} visitors (warm cache): timeline ${median(timings.timeline).toFixed(1)} ms, stats ${median(timings.stats).toFixed(1)} ms`,
      );
      console.log(scanLines(String(explain[0]?.explain_value ?? '')));
    }
  } finally {
    c.closeSync();
    db.closeSync();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Row groups whose visitor_id statistics admit `id`, and the compressed bytes of all their column chunks. */
async function candidateGroups(c: Awaited<ReturnType<DuckDBInstance['connect']>>, glob: string, id: string) {
  const [row] = (
    await c.runAndReadAll(`
      WITH groups AS (
        SELECT file_name, row_group_id FROM parquet_metadata('${glob}')
        WHERE path_in_schema = 'visitor_id' AND stats_min_value <= '${id}' AND stats_max_value >= '${id}')
      SELECT count(DISTINCT (m.file_name, m.row_group_id)), sum(m.total_compressed_size)
      FROM parquet_metadata('${glob}') m JOIN groups g USING (file_name, row_group_id)`)
  ).getRows();
  const [groups, bytes] = row!.map(Number) as [number, number];
  return { groups, bytes };
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);

/** The scan operator's lines of an EXPLAIN ANALYZE plan (rows scanned, files, timing). */
function scanLines(plan: string): string {
  return plan
    .split('\n')
    .filter((l) => /SCAN|Files|Rows|Total Time|rows|Filters/i.test(l))
    .map((l) => l.replace(/[│┌┐└┘─┬┴├┤]/g, '').trim())
    .filter((l) => l.length > 0)
    .join(' | ');
}

await main();
