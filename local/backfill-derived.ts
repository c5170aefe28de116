import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { localCodec } from './parquet-codec.js';
import { writeDerived } from './derived-writer.js';
import { localPaths, parquetFilesUnder, type LocalPaths } from './paths.js';
import { StoreBusyError, withStoreLock } from './store-lock.js';
import { keyVisitors } from './visitor-keys.js';
import { markWholeFragments } from './whole-fragments.js';

// Writes the missing derived files of a local store: every event file without one of its derived files (data
// imported before that relation existed) gets it, staged, keyed and then renamed into place; then the whole
// fragments are marked. An event file and its derived files are all that must correspond (docs/STORAGE.md).
//   ANALYTICS_DATA_DIR=./.data npx tsx local/backfill-derived.ts

/**
 * Returns the number of derived files written. Keys the buckets and marks whole session fragments on the way
 * (which also upgrades files written before keys or `whole` existed), under the store lock like an import.
 */
export async function backfillDerived(paths: LocalPaths): Promise<number> {
  return withStoreLock(paths, async () => {
    const written = await writeMissing(paths);
    await markWholeFragments(paths);
    return written;
  });
}

/**
 * The backfill as `npm start` runs it: at once, and while another process imports (it holds the store lock, and
 * marks only its own files when it publishes) again every `retryMs` until it runs, so a store upgraded during an
 * import gets its missing files within seconds of it. Returns how many files the first attempt wrote (null when
 * it waits) and a stop for the retries.
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

async function writeMissing(paths: LocalPaths): Promise<number> {
  const missing = parquetFilesUnder(paths.eventsDir)
    .map((name) => ({ name, folders: derivedRelations.map((r) => r.folder).filter((f) => !existsSync(join(paths.derivedDirs[f], name))) }))
    .filter((m) => m.folders.length > 0);
  const staging = join(paths.stagingDir, `backfill-${process.pid}`);
  const stagingDirs = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(staging, r.folder)])) as Record<DerivedFolder, string>;
  try {
    if (missing.length) await stage(missing, paths, stagingDirs);
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
    await rm(staging, { recursive: true, force: true });
  }
}

async function stage(missing: { name: string; folders: DerivedFolder[] }[], paths: LocalPaths, stagingDirs: Record<DerivedFolder, string>): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:', { threads: String(process.env.DUCKDB_THREADS ?? 2) });
  const connection = await instance.connect();
  try {
    for (const { name, folders } of missing) {
      await writeDerived(connection, `read_parquet(${pathLiteral(join(paths.eventsDir, name))})`, name, stagingDirs, localCodec(), folders);
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const written = await backfillDerived(localPaths());
  console.log(`${written} derived files written`);
}
