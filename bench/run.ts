import './env.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findJava, TRINO_VERSION } from '../local/tools/trino-install.js';
import { ApiEngine, type LoadAtOnce } from './api.js';
import { chartSvg, formatMs, writeChart } from './chart.js';
import { ClickHouse } from './clickhouse.js';
import { ensureDataset, rowCount } from './dataset.js';
import { DuckDbTwin } from './duckdb-twin.js';
import { measureBundles } from './lambda.js';
import { measureQuery, percentile, type TimingOptions } from './measure.js';
import { Postgres } from './postgres.js';
import { dashboardMix } from './query-mix.js';
import {
  engineLabels,
  mergeReport,
  renderReport,
  type BenchFigures,
  type EngineName,
  type QueryFigures,
} from './report.js';
import { differences, type BenchEngine, type RunResult } from './results.js';
import { parquetCodecs, type ParquetCodec } from '../writer/parquet-codec.js';

// `npm run bench`: how fast and how cheap the API is next to its peers, in one run on this machine.
//   npm run bench -- [--rows 10M | --100m] [--peers] [--repeat 10] [--warmup 1] [--budget 60] [--only totals,journeys]
//                    [--seed 42] [--end-date 2026-11-20] [--codec zstd] [--no-lambda] [--no-trino] [--no-write]
// Generates (or reuses) the data set, times the dashboard mix on the API over HTTP, on the API's Athena path on a
// local Trino (where Java 24+ is found; not with --no-trino), on its SQL in DuckDB directly,
// and with --peers on ClickHouse and PostgreSQL (installed and started here, stopped at the end), then writes its
// sections of docs/BENCHMARKS.md (other sections are kept) and docs/benchmarks.png (with --no-write: under .bench/).

const usage = `usage: npm run bench -- [--rows N|--100m] [--peers] [--repeat N] [--warmup N] [--min-runs N] [--budget SECONDS]
                     [--only ID,ID] [--seed N] [--end-date YYYY-MM-DD] [--days N] [--codec CODEC] [--no-lambda] [--no-trino]
                     [--no-write] [--trino-heap GIB]
  --codec: every file of the data set in one Parquet codec (zstd: as the S3 writers write them); a data set of its own.
  --trino-heap: the local Trino's heap in GiB (default 2, as npm start's); a query may take 30% of it, and the
  server runs two statements per GiB at once.`;

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string' },
    '100m': { type: 'boolean', default: false },
    peers: { type: 'boolean', default: false },
    repeat: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '1' },
    'min-runs': { type: 'string', default: '3' },
    budget: { type: 'string', default: '30' },
    only: { type: 'string' },
    seed: { type: 'string', default: '42' },
    'end-date': { type: 'string', default: '2026-11-20' },
    days: { type: 'string', default: '90' },
    'no-lambda': { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'no-trino': { type: 'boolean', default: false },
    codec: { type: 'string' },
    'trino-heap': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (flags.help) {
  console.log(usage);
  process.exit(0);
}

const projectRoot = resolve(import.meta.dirname, '..');
const benchDir = join(projectRoot, '.bench');
const log = (line: string) => console.error(line);

const rows = flags.rows ? rowCount(flags.rows) : flags['100m'] ? 100_000_000 : 10_000_000;
const timing: TimingOptions = {
  warmup: Number(flags.warmup),
  repeat: Number(flags.repeat),
  minRuns: Math.min(Number(flags['min-runs']), Number(flags.repeat)),
  budgetMs: Number(flags.budget) * 1000,
};
const startedAt = new Date();
// The 1-minute load average, sampled every 5 s while queries run: other work on the machine shows here.
const loadSamples: number[] = [];
const sampler = setInterval(() => loadSamples.push(loadavg()[0]!), 5_000);
sampler.unref();

const dataset = await ensureDataset(
  {
    seed: Number(flags.seed),
    rows,
    endDate: flags['end-date']!,
    days: Number(flags.days),
    domain: 'shop.bench.example',
    ...(flags.codec ? { codec: codecFlag(flags.codec) } : {}),
  },
  join(benchDir, 'data'),
  log,
);
function codecFlag(text: string): ParquetCodec {
  if (!(parquetCodecs as readonly string[]).includes(text))
    throw new Error(`--codec must be one of ${parquetCodecs.join(', ')}, not ${text}`);
  return text as ParquetCodec;
}

let mix = dashboardMix(dataset.spec.domain, dataset.spec.endDate);
if (flags.only) mix = mix.filter((q) => flags.only!.split(',').includes(q.id));

// Everything started here is stopped at the end, also on Ctrl-C.
const stops: (() => Promise<void> | void)[] = [];
const stopAll = async () => {
  for (const stop of stops.splice(0).reverse())
    await Promise.resolve(stop()).catch((e: Error) => log(`stopping: ${e.message}`));
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));

const engines: BenchEngine[] = [];
const skipped: BenchFigures['skipped'] = [];
const versions: BenchFigures['versions'] = {};
const peerTables: BenchFigures['peerTables'] = {};
const queries: QueryFigures[] = [];
const loadsAtOnce: LoadAtOnce[] = [];
const batchedLoads: LoadAtOnce[] = [];
/** How many times the Athena path's mix is sent at once. */
const LOADS_AT_ONCE = 3;
let storage: BenchFigures['storage'];
let twin: DuckDbTwin | undefined;
try {
  twin = await DuckDbTwin.open(dataset);
  stops.push(() => twin!.close());
  versions.duckdb = await twin.version();
  storage = await twin.storage();
  const java = findJava();
  const trino = !flags['no-trino'] && !('missing' in java);
  if (!trino)
    skipped.push({
      engine: 'athena',
      reason: flags['no-trino'] ? 'not asked (--no-trino)' : (java as { missing: string }).missing,
    });
  const trinoHeapGiB = flags['trino-heap'] === undefined ? undefined : Number(flags['trino-heap']);
  if (trinoHeapGiB !== undefined && !(Number.isInteger(trinoHeapGiB) && trinoHeapGiB >= 1 && trinoHeapGiB <= 64))
    throw new Error('--trino-heap must be a whole number of GiB from 1 to 64');
  const [api, ...athena] = await ApiEngine.start(dataset, {
    trino,
    ...(trinoHeapGiB === undefined ? {} : { trinoHeapGiB }),
  });
  stops.push(() => api!.close());
  if (athena.length)
    versions.athena = `Trino ${TRINO_VERSION} (heap ${trinoHeapGiB ?? 2} GiB) behind the Athena emulator`;
  engines.push(api!, ...athena, twin);

  if (flags.peers) {
    const peersDir = join(benchDir, 'peers');
    mkdirSync(peersDir, { recursive: true });
    for (const [name, start] of [
      ['clickhouse', ClickHouse.start],
      ['postgres', Postgres.start],
    ] as const) {
      const peer = await start(peersDir, log);
      if (typeof peer === 'string') {
        log(`${name}: skipped (${peer})`);
        skipped.push({ engine: name, reason: peer });
        continue;
      }
      stops.push(() => peer.stop());
      try {
        await peer.load(dataset, join(benchDir, 'export'), log);
        versions[name] = peer.version;
        peerTables[name] = await peer.tableBytes();
        engines.push(peer);
      } catch (error) {
        log(`${name}: skipped, loading failed (${(error as Error).message})`);
        skipped.push({ engine: name, reason: `loading failed: ${(error as Error).message.slice(0, 200)}` });
      }
    }
  } else {
    skipped.push(
      { engine: 'clickhouse', reason: 'not asked (run with --peers)' },
      { engine: 'postgres', reason: 'not asked (run with --peers)' },
    );
  }

  for (const query of mix) {
    const figures: QueryFigures = { query, cells: {}, mismatches: {} };
    const cells = await measureQuery(engines, query, timing);
    for (const engine of engines) figures.cells[engine.name] = cells.get(engine);
    const reference = figures.cells.api?.result;
    for (const engine of engines) {
      const result = figures.cells[engine.name]?.result;
      if (engine.name !== 'api' && reference && result)
        figures.mismatches[engine.name] = differences(reference, result);
    }
    figures.scan = await twin.scanFacts(query);
    queries.push(figures);
    log(`${query.id.padEnd(16)} ${engines.map((e) => `${e.name} ${formatMs(figures.cells[e.name]!.p50)}`).join('  ')}`);
  }

  const athenaPath = athena[0];
  // The mix on the Athena path as whole loads, the answer cache still off: its requests sent at once, as a client
  // asking each card in a request of its own sends them; and batched, as the dashboard sends a load
  // (dashboard/query-batches.ts).
  if (athenaPath && queries.length > 1) {
    const mixQueries = queries.map((q) => q.query);
    for (const [how, loads, send] of [
      ['at once', loadsAtOnce, () => athenaPath.runAtOnce(mixQueries)],
      ['batched', batchedLoads, () => athenaPath.runBatched(mixQueries)],
    ] as const) {
      // A failure here (Trino itself gone) leaves the loads measured so far, not the run's other figures.
      try {
        for (let i = 0; i < LOADS_AT_ONCE; i++) {
          const load = await send();
          loads.push(load);
          const failed = load.requests.filter((r) => r.status !== 200).length;
          log(`athena load ${how} ${i + 1}: ${formatMs(load.wallMs)}, ${failed} of ${load.requests.length} not 200`);
        }
      } catch (error) {
        log(`athena loads ${how}: ${(error as Error).message}`);
      }
    }
  }

  // Repeat loads on the Athena path: the answer cache on, a first load of the mix fills it, then each query again.
  if (athenaPath) {
    process.env.ANALYTICS_ANSWER_CACHE = 'on';
    // A failure here leaves the repeat figures out, not the run's others.
    try {
      for (const figures of queries) await athenaPath.run(figures.query);
      for (const figures of queries) {
        const runs: RunResult[] = [];
        for (let i = 0; i < timing.repeat; i++) runs.push(await athenaPath.run(figures.query));
        figures.repeat = {
          p50: percentile(
            runs.map((r) => r.ms),
            50,
          ),
          ...(runs[0]?.usage ? { usage: runs[0].usage } : {}),
        };
        log(`${figures.query.id.padEnd(16)} athena repeat ${formatMs(figures.repeat.p50)}`);
      }
    } catch (error) {
      log(`athena repeats: ${(error as Error).message}`);
    }
    process.env.ANALYTICS_ANSWER_CACHE = 'off';
  }
} finally {
  clearInterval(sampler);
  await stopAll();
}

let bundles: BenchFigures['bundles'] = null;
if (!flags['no-lambda']) {
  log('lambda: cdk synth and import() timings ...');
  try {
    bundles = measureBundles(projectRoot, join(benchDir, 'cdk.out'), 7);
  } catch (error) {
    bundles = `cdk synth failed: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`;
  }
}

const argv = process.argv.slice(2).join(' ');
const figures: BenchFigures = {
  command: `npm run bench${argv ? ` -- ${argv}` : ''}`,
  startedAt,
  seconds: (Date.now() - startedAt.getTime()) / 1000,
  machine: {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? '?',
    memoryGiB: totalmem() / 2 ** 30,
    node: process.versions.node,
    os: `${platform()} ${release()} ${arch()}`,
    load: loadSamples.length ? loadSamples : [loadavg()[0]!],
  },
  versions,
  dataset,
  storage,
  timing,
  skipped,
  peerTables,
  queries,
  bundles,
  ...(loadsAtOnce.length ? { loadsAtOnce } : {}),
  ...(batchedLoads.length ? { batchedLoads } : {}),
};

// The raw figures too, for comparing runs (git-ignored, like all of .bench/).
mkdirSync(join(benchDir, 'results'), { recursive: true });
writeFileSync(
  join(benchDir, 'results', `${startedAt.toISOString().replace(/[:.]/g, '-')}-${dataset.id}.json`),
  JSON.stringify(figures, null, 1),
);

const markdown = renderReport(figures);
console.log(markdown);
const outDir = flags['no-write'] ? benchDir : join(projectRoot, 'docs');
const reportFile = join(outDir, 'BENCHMARKS.md');
writeFileSync(reportFile, mergeReport(existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '', markdown));
const colors: Record<EngineName, string> = {
  api: '#2563eb',
  athena: '#7c3aed',
  duckdb: '#93c5fd',
  raw: '#10b981',
  clickhouse: '#f59e0b',
  postgres: '#6b7280',
};
const ran = (Object.keys(engineLabels) as EngineName[]).filter((e) => queries.some((q) => q.cells[e]));
const svg = chartSvg(
  `Dashboard mix, p50 per query: ${(dataset.rows / 1e6).toFixed(dataset.rows < 1e6 ? 1 : 0)}M events, ${figures.machine.cpus} cores, ${startedAt.toISOString().slice(0, 10)}`,
  queries.map((q) => q.query.id),
  ran.map((e) => ({ label: engineLabels[e], color: colors[e], values: queries.map((q) => q.cells[e]?.p50 ?? NaN) })),
);
const chartProblem = writeChart(svg, join(benchDir, 'benchmarks.svg'), join(outDir, 'benchmarks.png'));
log(chartProblem ?? `wrote ${join(outDir, 'BENCHMARKS.md')} and ${join(outDir, 'benchmarks.png')}`);
