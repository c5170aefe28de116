import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backfillDerived } from '../local/store/backfill.js';
import { importLineBlocks } from '../local/store/importer.js';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { localPaths, type LocalPaths } from '../local/store/paths.js';
import { defaultShape, generateEventLines, type GeneratorSpec } from './generator.js';

// The generated data set, cached: one ANALYTICS_DATA_DIR per (generator version, seed, rows, window) under
// .bench/data/, filled through the project's own import path (importLineBlocks, checked on worker threads as
// `npm run import` checks a file) and reused when it is complete.

/** Bump when the generator's output changes, so cached sets made by an older generator are not reused. */
const GENERATOR_VERSION = 1;

export interface Dataset {
  id: string;
  spec: GeneratorSpec;
  paths: LocalPaths;
  rows: number;
  files: number;
  bytes: number;
  /** Seconds the generation + import took when the set was made (cached runs report the original figure). */
  generationSeconds: number;
  reused: boolean;
}

interface DatasetMeta {
  id: string;
  spec: GeneratorSpec;
  rows: number;
  files: number;
  bytes: number;
  generationSeconds: number;
  createdAt: string;
}

export function datasetId(spec: GeneratorSpec): string {
  const { shape } = spec;
  const shaped = shape && JSON.stringify(shape) !== JSON.stringify(defaultShape)
    ? `-pages${shape.blogPosts}-return${shape.returnChance ?? 'own'}-stop${shape.pageviewStop}-max${shape.maxExtraPageviews}-visitors${shape.visitors ?? 'any'}`
    : '';
  return `v${GENERATOR_VERSION}-seed${spec.seed}-rows${spec.rows}-${spec.days}d-to-${spec.endDate}${shaped}`;
}

export async function ensureDataset(spec: GeneratorSpec, root: string, log: (line: string) => void): Promise<Dataset> {
  const id = datasetId(spec);
  const dataDir = join(root, id);
  const metaFile = join(dataDir, 'dataset.json');
  const paths = localPaths(dataDir);
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DatasetMeta;
    // A set cached before the derived relations existed gets them now (nothing to do when complete).
    const backfilled = await backfillDerived(paths);
    if (backfilled) log(`data set ${id}: wrote ${backfilled} missing derived files (docs/STORAGE.md)`);
    log(`data set ${id}: reusing ${meta.rows.toLocaleString('en-US')} rows in ${meta.files} files (generated in ${meta.generationSeconds.toFixed(0)} s)`);
    return { id, spec, paths, rows: meta.rows, files: meta.files, bytes: meta.bytes, generationSeconds: meta.generationSeconds, reused: true };
  }

  // A half-made set from an interrupted run is thrown away, never completed.
  rmSync(dataDir, { recursive: true, force: true });
  log(`data set ${id}: generating ${spec.rows.toLocaleString('en-US')} rows through importLineBlocks ...`);
  const started = performance.now();
  const dynamo = await openLocalDynamo(paths, { publish: false });
  let lastLog = started;
  let generated = 0;
  async function* progress(): AsyncGenerator<string> {
    for await (const line of generateEventLines(spec)) {
      generated += 1;
      if ((generated & 0xffff) === 0 && performance.now() - lastLog > 15_000) {
        lastLog = performance.now();
        const seconds = (lastLog - started) / 1000;
        log(`  ${generated.toLocaleString('en-US')} rows, ${seconds.toFixed(0)} s, ${Math.round(generated / seconds).toLocaleString('en-US')} rows/s`);
      }
      yield line;
    }
  }
  // Blocks of about 1 MiB of whole lines, as importNdjson reads a file.
  async function* blocks(): AsyncGenerator<Uint8Array> {
    let lines: string[] = [];
    let size = 0;
    for await (const line of progress()) {
      lines.push(line);
      size += line.length + 1;
      if (size < 1 << 20) continue;
      yield Buffer.from(`${lines.join('\n')}\n`);
      lines = [];
      size = 0;
    }
    if (lines.length) yield Buffer.from(`${lines.join('\n')}\n`);
  }
  try {
    const report = await importLineBlocks(blocks(), paths);
    if (report.rejected.length > 0) throw new Error(`the importer rejected generated lines: ${JSON.stringify(report.rejected.slice(0, 3))}`);
    const generationSeconds = (performance.now() - started) / 1000;
    const { files, bytes } = parquetFiles(paths.eventsDir);
    const meta: DatasetMeta = { id, spec, rows: report.rowsWritten, files, bytes, generationSeconds, createdAt: new Date().toISOString() };
    writeFileSync(metaFile, JSON.stringify(meta, null, 2));
    log(`data set ${id}: ${meta.rows.toLocaleString('en-US')} rows, ${files} files, ${(bytes / 2 ** 20).toFixed(1)} MiB in ${generationSeconds.toFixed(1)} s (${Math.round(meta.rows / generationSeconds).toLocaleString('en-US')} rows/s)`);
    return { id, spec, paths, rows: meta.rows, files, bytes, generationSeconds, reused: false };
  } finally {
    await dynamo.close();
  }
}

/** A row count as the bench commands take it: 1000000, 1e6, 1M, 500k. */
export function rowCount(text: string): number {
  const m = /^(\d+(?:\.\d+)?(?:e\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!m) throw new Error(`not a row count: ${text}`);
  return Math.round(Number(m[1]) * ({ k: 1e3, m: 1e6 }[m[2]!.toLowerCase() as 'k' | 'm'] ?? 1));
}

/** Every Parquet file under the events folder, with its size. */
export function parquetFiles(eventsDir: string): { files: number; bytes: number; list: { path: string; bytes: number }[] } {
  const list: { path: string; bytes: number }[] = [];
  for (const entry of readdirSync(eventsDir, { recursive: true }) as string[]) {
    if (!entry.endsWith('.parquet')) continue;
    const path = join(eventsDir, entry);
    list.push({ path, bytes: statSync(path).size });
  }
  return { files: list.length, bytes: list.reduce((sum, f) => sum + f.bytes, 0), list };
}
