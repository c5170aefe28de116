import { existsSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { backfillDerived } from '../local/store/backfill.js';
import { eventFileOrder, eventRowGroupRows, writeEventFile } from '../writer/event-file-layout.js';
import { localCodecs, parquetCodecs, S3_ZSTD_LEVEL, type ParquetCodec } from '../writer/parquet-codec.js';
import { openScratchDuckDb } from '../writer/scratch-duckdb.js';
import { importLineBlocks } from '../local/store/local-destination.js';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { localPaths, type LocalPaths } from '../local/store/paths.js';
import { defaultShape, generateEventLines, type GeneratorSpec } from './generator.js';

// The generated data set, cached: one ANALYTICS_DATA_DIR per (generator version, seed, rows, window) under
// .bench/data/, filled through the project's own import path (importLineBlocks, checked on worker threads as
// `npm run import` checks a file) and reused when it is complete.

/** Bump when the generator's output changes, so cached sets made by an older generator are not reused. */
const GENERATOR_VERSION = 1;

/** How the importer lays out event files now (writer/event-file-layout.ts); a cached set in another is rewritten. */
const EVENT_LAYOUT = `${eventFileOrder}; ${eventRowGroupRows.local} rows per row group`;

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
  /** EVENT_LAYOUT when the event files were written; absent for sets written before the layout had a name. */
  eventLayout?: string;
}

export function datasetId(spec: GeneratorSpec): string {
  const { shape } = spec;
  const shaped =
    shape && JSON.stringify(shape) !== JSON.stringify(defaultShape)
      ? `-pages${shape.blogPosts}-return${shape.returnChance ?? 'own'}-stop${shape.pageviewStop}-max${shape.maxExtraPageviews}-visitors${shape.visitors ?? 'any'}`
      : '';
  // ZSTD files are written at the S3 writers' level, which names the set: files of another level are another set.
  const codec = spec.codec ? `-${spec.codec}${spec.codec === 'zstd' ? S3_ZSTD_LEVEL : ''}` : '';
  return `v${GENERATOR_VERSION}-seed${spec.seed}-rows${spec.rows}-${spec.days}d-to-${spec.endDate}${shaped}${codec}`;
}

export async function ensureDataset(spec: GeneratorSpec, root: string, log: (line: string) => void): Promise<Dataset> {
  const id = datasetId(spec);
  // The importer, and the server the bench starts in this process, write every file in the spec's codec.
  if (spec.codec) process.env.ANALYTICS_PARQUET_COMPRESSION = spec.codec;
  const dataDir = join(root, id);
  const metaFile = join(dataDir, 'dataset.json');
  const paths = localPaths(dataDir);
  if (existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as DatasetMeta;
    // A set cached before the derived relations existed gets them now (nothing to do when complete).
    const backfilled = await backfillDerived(paths);
    if (backfilled) log(`data set ${id}: wrote ${backfilled} missing derived files (docs/STORAGE.md)`);
    if (meta.eventLayout !== EVENT_LAYOUT) {
      const started = performance.now();
      const rewritten = await relayoutEventFiles(paths.eventsDir);
      writeFileSync(metaFile, JSON.stringify({ ...meta, eventLayout: EVENT_LAYOUT }, null, 2));
      log(
        `data set ${id}: rewrote ${rewritten} event files in the importer's layout (${EVENT_LAYOUT}) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
    }
    log(
      `data set ${id}: reusing ${meta.rows.toLocaleString('en-US')} rows in ${meta.files} files (generated in ${meta.generationSeconds.toFixed(0)} s)`,
    );
    return {
      id,
      spec,
      paths,
      rows: meta.rows,
      files: meta.files,
      bytes: meta.bytes,
      generationSeconds: meta.generationSeconds,
      reused: true,
    };
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
        log(
          `  ${generated.toLocaleString('en-US')} rows, ${seconds.toFixed(0)} s, ${Math.round(generated / seconds).toLocaleString('en-US')} rows/s`,
        );
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
    if (report.rejected.length > 0)
      throw new Error(`the importer rejected generated lines: ${JSON.stringify(report.rejected.slice(0, 3))}`);
    const generationSeconds = (performance.now() - started) / 1000;
    const { files, bytes } = parquetFiles(paths.eventsDir);
    const meta: DatasetMeta = {
      id,
      spec,
      rows: report.rowsWritten,
      files,
      bytes,
      generationSeconds,
      createdAt: new Date().toISOString(),
      eventLayout: EVENT_LAYOUT,
    };
    writeFileSync(metaFile, JSON.stringify(meta, null, 2));
    log(
      `data set ${id}: ${meta.rows.toLocaleString('en-US')} rows, ${files} files, ` +
        `${(bytes / 2 ** 20).toFixed(1)} MiB in ${generationSeconds.toFixed(1)} s ` +
        `(${Math.round(meta.rows / generationSeconds).toLocaleString('en-US')} rows/s)`,
    );
    return { id, spec, paths, rows: meta.rows, files, bytes, generationSeconds, reused: false };
  } finally {
    await dynamo.close();
  }
}

/**
 * Rewrites every event file under `eventsDir` in the importer's current layout, in its own codec and under its own
 * name (the same rows, so every derived file stays true); returns how many. Each file is written beside the old one
 * and renamed over it once its row count matched.
 */
async function relayoutEventFiles(eventsDir: string): Promise<number> {
  const scratch = await openScratchDuckDb();
  try {
    const files = parquetFiles(eventsDir).list;
    for (const { path } of files) {
      const [meta] = (
        await scratch.connection.runAndReadAll(
          `SELECT lower(any_value(compression)) AS codec FROM parquet_metadata(${pathLiteral(path)})`,
        )
      ).getRowObjectsJson();
      const codec = String(meta?.codec) as ParquetCodec;
      if (!parquetCodecs.includes(codec))
        throw new Error(`${path}: codec ${String(meta?.codec)} is not one the importer writes`);
      const next = `${path}.relayout`;
      // A ZSTD set's files keep the S3 writers' level that names the set.
      await writeEventFile(scratch.connection, [path], next, codec, 'local', localCodecs().zstdLevel);
      const [counts] = (
        await scratch.connection.runAndReadAll(
          `SELECT (SELECT count(*) FROM read_parquet(${pathLiteral(path)})) AS before, (SELECT count(*) FROM read_parquet(${pathLiteral(next)})) AS after`,
        )
      ).getRowObjectsJson();
      if (counts?.before !== counts?.after)
        throw new Error(`${path}: rewritten with ${String(counts?.after)} rows instead of ${String(counts?.before)}`);
      renameSync(next, path);
    }
    return files.length;
  } finally {
    scratch.close();
  }
}

/** A row count as the bench commands take it: 1000000, 1e6, 1M, 500k. */
export function rowCount(text: string): number {
  const m = /^(\d+(?:\.\d+)?(?:e\d+)?)([kKmM]?)$/.exec(text.trim());
  if (!m) throw new Error(`not a row count: ${text}`);
  return Math.round(Number(m[1]) * ({ k: 1e3, m: 1e6 }[m[2]!.toLowerCase() as 'k' | 'm'] ?? 1));
}

/** Every Parquet file under the events folder, with its size. */
export function parquetFiles(eventsDir: string): {
  files: number;
  bytes: number;
  list: { path: string; bytes: number }[];
} {
  const list: { path: string; bytes: number }[] = [];
  for (const entry of readdirSync(eventsDir, { recursive: true }) as string[]) {
    if (!entry.endsWith('.parquet')) continue;
    const path = join(eventsDir, entry);
    list.push({ path, bytes: statSync(path).size });
  }
  return { files: list.length, bytes: list.reduce((sum, f) => sum + f.bytes, 0), list };
}
