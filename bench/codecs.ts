import './env.js';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { derivedRelations } from '../shared/events/derived-relations.js';

import { localPaths } from '../local/store/paths.js';
import { ApiEngine } from './api.js';
import { ensureDataset, rowCount, type Dataset } from './dataset.js';
import { measureQuery } from './measure.js';
import { dashboardMix } from './query-mix.js';

// `npm run bench:codecs`: what each Parquet codec costs per relation of the local store, on disk and in the
// dashboard mix. The bench's data set (default shape) is copied once per codec under .bench/codecs/ (hard links,
// then every file of the current snapshot rewritten in that codec), and stores mixing codecs per relation are
// assembled from those copies by links. Each store gets its own local API; the mix runs in rounds alternating the
// stores, so load on the machine hits all alike. Prints bytes per event per relation and codec, and the p50 of
// every query per store.
//   npm run bench:codecs -- [--rows 10M] [--repeat 5] [--mixes events=zstd+sessions=uncompressed,...]

const folders = ['events', ...derivedRelations.map((r) => r.folder)] as const;
// The store's codecs and LZ4_RAW, measured though not offered (Trino cannot read DuckDB's LZ4_RAW pages).
const parquetCodecs = ['uncompressed', 'lz4_raw', 'snappy', 'zstd'] as const;
type Codec = (typeof parquetCodecs)[number];
type Folder = (typeof folders)[number];
type CodecMap = Record<Folder, Codec>;

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    repeat: { type: 'string', default: '5' },
    mixes: { type: 'string', default: '' },
  },
});
const rows = rowCount(flags.rows!);
const projectRoot = resolve(import.meta.dirname, '..');
const log = (line: string) => console.error(line);
const dataset = await ensureDataset(
  { seed: 42, rows, endDate: '2026-11-20', days: 90, domain: 'shop.bench.example' },
  join(projectRoot, '.bench', 'data'),
  log,
);
const codecsRoot = join(projectRoot, '.bench', 'codecs');

/** The data set's folder of `folder` in the current snapshot of `dataDir`. */
const folderOf = (dataDir: string, folder: Folder) =>
  folder === 'events' ? localPaths(dataDir).eventsDir : localPaths(dataDir).derivedDirs[folder];
const parquetUnder = (dir: string) =>
  (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.parquet'));

/** A copy of the data set with every file in `codec`: made once, then reused. */
async function uniformCopy(codec: Codec): Promise<string> {
  const dir = join(codecsRoot, `${dataset.id}-${codec}`);
  if (existsSync(join(dir, 'complete'))) return dir;
  log(`codecs: writing the store in ${codec} ...`);
  execFileSync('rm', ['-rf', dir]);
  mkdirSync(codecsRoot, { recursive: true });
  execFileSync('cp', ['-al', dataset.paths.dataDir, dir]);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  for (const folder of folders) {
    const root = folderOf(dir, folder);
    for (const file of parquetUnder(root)) {
      const path = join(root, file);
      // Written beside and renamed over the link, so the data set's own file is never touched.
      await connection.run(
        `COPY (SELECT * FROM read_parquet(${pathLiteral(path)})) TO ${pathLiteral(`${path}.tmp`)} (FORMAT parquet, COMPRESSION ${codec})`,
      );
      renameSync(`${path}.tmp`, path);
    }
  }
  connection.closeSync();
  instance.closeSync();
  execFileSync('touch', [join(dir, 'complete')]);
  return dir;
}

/** A store whose relations come from the uniform copies named by `codecs`, by links. */
function mixedStore(name: string, codecs: CodecMap, copies: Record<Codec, string>): string {
  const dir = join(codecsRoot, `${dataset.id}-mix-${name}`);
  execFileSync('rm', ['-rf', dir]);
  execFileSync('cp', ['-al', copies.uncompressed, dir]);
  for (const folder of folders) {
    const target = folderOf(dir, folder);
    execFileSync('rm', ['-rf', target]);
    execFileSync('cp', ['-al', folderOf(copies[codecs[folder]], folder), target]);
  }
  return dir;
}

function bytesOf(dir: string): number {
  return parquetUnder(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

const copies = {} as Record<Codec, string>;
for (const codec of parquetCodecs) copies[codec] = await uniformCopy(codec);

console.log(`\nBytes per event, ${dataset.rows.toLocaleString('en-US')} events (${dataset.id}):\n`);
console.log(`| relation | ${parquetCodecs.join(' | ')} |\n|---|${parquetCodecs.map(() => '---:').join('|')}|`);
const bytes = {} as Record<Folder, Record<Codec, number>>;
for (const folder of folders) {
  bytes[folder] = Object.fromEntries(
    parquetCodecs.map((codec) => [codec, bytesOf(folderOf(copies[codec], folder))]),
  ) as Record<Codec, number>;
  console.log(`| ${folder} | ${parquetCodecs.map((c) => (bytes[folder][c] / dataset.rows).toFixed(1)).join(' | ')} |`);
}
console.log(
  `| **store** | ${parquetCodecs
    .map((c) => folders.reduce((sum, f) => sum + bytes[f][c], 0) / dataset.rows)
    .map((b) => `**${b.toFixed(1)}**`)
    .join(' | ')} |`,
);

const uniform = (codec: Codec) => Object.fromEntries(folders.map((f) => [f, codec])) as CodecMap;
const stores: { name: string; codecs: CodecMap; dir: string }[] = parquetCodecs.map((codec) => ({
  name: codec,
  codecs: uniform(codec),
  dir: copies[codec],
}));
for (const mix of flags.mixes!.split(',').filter(Boolean)) {
  const codecs = { ...uniform('uncompressed') };
  for (const part of mix.split('+')) {
    const [folder, codec] = part.split('=') as [Folder, Codec];
    if (!folders.includes(folder) || !parquetCodecs.includes(codec)) throw new Error(`not a relation=codec: ${part}`);
    codecs[folder] = codec;
  }
  stores.push({ name: mix, codecs, dir: mixedStore(mix.replace(/[=+]/g, '-'), codecs, copies) });
}

const engines = [];
for (const store of stores) {
  const [api] = await ApiEngine.start({ ...dataset, paths: localPaths(store.dir) } satisfies Dataset, { trino: false });
  engines.push(api!);
}
const loads: number[] = [];
const sums = stores.map(() => 0);
console.log(`\nDashboard mix through the API, p50 per store (${flags.repeat} rounds alternating the stores):\n`);
console.log(`| query | ${stores.map((s) => s.name).join(' | ')} |\n|---|${stores.map(() => '---:').join('|')}|`);
try {
  for (const query of dashboardMix(dataset.spec.domain, dataset.spec.endDate)) {
    loads.push(loadavg()[0]!);
    const cells = await measureQuery(engines, query, {
      warmup: 1,
      repeat: Number(flags.repeat),
      minRuns: 3,
      budgetMs: 60_000,
    });
    const p50s = engines.map((e) => cells.get(e)!.p50);
    p50s.forEach((p, i) => (sums[i]! += p));
    console.log(`| ${query.id} | ${p50s.map((p) => `${p.toFixed(0)} ms`).join(' | ')} |`);
  }
} finally {
  for (const engine of engines) await engine.close();
}
console.log(`| **sum** | ${sums.map((s) => `**${s.toFixed(0)} ms**`).join(' | ')} |`);
console.log(
  `| bytes per event | ${stores.map((s) => (folders.reduce((sum, f) => sum + bytes[f][s.codecs[f]], 0) / dataset.rows).toFixed(1)).join(' | ')} |`,
);
console.log(
  `\nLoad average (1 min) during the mix: ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}.`,
);
