import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openScratchDuckDb } from './scratch-duckdb.js';
import { pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { localCodecs } from './parquet-codec.js';
import { writeDerived } from './derived-writer.js';
import { parquetFilesUnder, type LocalPaths } from './paths.js';
import { StoreBusyError } from './store-lock.js';
import { stagingName, withStoreTransaction } from './local-store.js';
import { keyVisitors } from './visitor-keys.js';
import { COMPACT_FROM_FILES, compactPartitions } from './compaction.js';
import { markWholeFragments } from './whole-fragments.js';

// Brings a local store up to date: partitions of many small files are compacted; every event file without one
// of its derived files (data imported before that relation existed), or with one lacking a column added since,
// gets it, staged, keyed and then renamed into place; then the whole fragments are marked. All of it in one store
// transaction (store/local-store.ts): published whole, or not at all.
//   by hand: ANALYTICS_DATA_DIR=./.data npx tsx local/cli/backfill-cli.ts

/**
 * Returns the number of derived files written. Partitions are compacted from `compactFrom` event files on: by default
 * ANALYTICS_COMPACT_FROM_FILES, else COMPACT_FROM_FILES.
 */
export async function backfillDerived(paths: LocalPaths, options: { compactFrom?: number } = {}): Promise<number> {
  const compactFrom = options.compactFrom ?? Number(process.env.ANALYTICS_COMPACT_FROM_FILES ?? COMPACT_FROM_FILES);
  return withStoreTransaction(paths, async (snapshot) => {
    const compacted = await compactPartitions(snapshot, compactFrom);
    const written = await deriveMissing(snapshot);
    // deriveMissing keys stored files only when it wrote some: files written without keys are keyed here.
    const keyed = written === 0 ? await keyVisitors(snapshot) : 0;
    const marked = await markWholeFragments(snapshot);
    return { value: written, changed: compacted + written + keyed + marked > 0 };
  });
}

/**
 * The backfill as `npm start` runs it: at once, and while another process imports (it holds the store lock)
 * again every `retryMs` until it runs, so a store upgraded during an import gets its missing files within seconds
 * of it. Returns how many files the first attempt wrote (null when it waits) and a stop for the retries.
 */
export async function backfillWhenFree(paths: LocalPaths, retryMs = 5_000, onError: (error: Error) => void = () => {}): Promise<{ written: number | null; stop: () => void }> {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = async (): Promise<number | null> => {
    try {
      return await backfillDerived(paths);
    } catch (error) {
      if (error instanceof StoreBusyError) return null;
      throw error;
    }
  };
  const retry = () => {
    timer = setTimeout(() => {
      attempt().then((written) => written === null && !stopped && retry(), onError);
    }, retryMs);
    timer.unref();
  };
  const written = await attempt();
  if (written === null) retry();
  return {
    written,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/**
 * Writes the derived files missing beside the event files of the snapshot at `paths`, or lacking a column added
 * since (written by an older version): staged, keyed with the stored buckets, then renamed into place; removes
 * derived files without their event file. Returns the files written. Run in a store transaction, before marking
 * whole fragments, by the backfill and by every local import: a fragment is only ever marked whole with its
 * `url_paths` (StoreCatalog.fragmentsHavePaths).
 */
export async function deriveMissing(paths: LocalPaths): Promise<number> {
  const scratch = await openScratchDuckDb();
  const { connection } = scratch;
  const staging = join(paths.stagingDir, stagingName('backfill'));
  const stagingDirs = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(staging, r.folder)])) as Record<DerivedFolder, string>;
  try {
    // A derived file without its event file (in a store written by an older version, which published files one by
    // one) would count its rows twice beside the files derived from a new event file: removed.
    const eventFiles = new Set(parquetFilesUnder(paths.eventsDir));
    for (const { folder } of derivedRelations) {
      for (const name of parquetFilesUnder(paths.derivedDirs[folder]).filter((n) => !eventFiles.has(n))) await rm(join(paths.derivedDirs[folder], name));
    }
    const outdated = await filesLackingColumns(connection, paths);
    const missing = [...eventFiles]
      .map((name) => ({
        name,
        folders: derivedRelations.map((r) => r.folder).filter((f) => !existsSync(join(paths.derivedDirs[f], name)) || outdated[f].has(name)),
      }))
      .filter((m) => m.folders.length > 0);
    if (missing.length === 0) return 0;
    for (const { name, folders } of missing) {
      await writeDerived(connection, `read_parquet(${pathLiteral(join(paths.eventsDir, name))})`, name, stagingDirs, localCodecs(), { only: folders });
    }
    // One keying pass over the staged buckets (before any reader sees them) and the stored files without keys.
    await keyVisitors(paths, { pending: stagingDirs });
    let written = 0;
    for (const { name, folders } of missing) {
      for (const folder of folders) {
        await mkdir(dirname(join(paths.derivedDirs[folder], name)), { recursive: true });
        await rename(join(stagingDirs[folder], name), join(paths.derivedDirs[folder], name));
        written += 1;
      }
    }
    return written;
  } finally {
    scratch.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Per relation, the stored files (relative names) lacking one of its declared columns: written by an older
 * version, they are derived again. (Columns filled in place by a later pass, `whole` and `visitor_key`, would
 * be too; re-deriving gives the same result.) Reads the files' footers only.
 */
async function filesLackingColumns(connection: DuckDBConnection, paths: LocalPaths): Promise<Record<DerivedFolder, Set<string>>> {
  const lacking = {} as Record<DerivedFolder, Set<string>>;
  for (const { folder, columns } of derivedRelations) {
    lacking[folder] = new Set();
    const dir = paths.derivedDirs[folder];
    if (parquetFilesUnder(dir).length === 0) continue;
    const schemas = (await connection.runAndReadAll(`SELECT file_name, list(name) AS names FROM parquet_schema(${pathLiteral(join(dir, '*', '*', '*.parquet'))}) GROUP BY 1`)).getRowObjectsJS();
    for (const { file_name, names } of schemas as { file_name: string; names: string[] }[]) {
      if (columns.some(([column]) => !names.includes(column))) lacking[folder].add(relative(dir, file_name));
    }
  }
  return lacking;
}
