import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';
import { pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { localCodecs } from '../../writer/parquet-codec.js';
import { writeDerived } from '../../writer/derived-writer.js';
import { type LocalPaths } from './paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { StoreBusyError } from './store-lock.js';
import { stagingName, withStoreTransaction } from './local-store.js';
import { keyVisitors } from './visitor-keys.js';
import { COMPACT_FROM_FILES, compactPartitions } from './compaction.js';
import { markWholeFragments } from './whole-fragments.js';

// Brings a local store up to date, in two store transactions (store/local-store.ts), each published whole or not
// at all. The upgrade changes answers: every event file without one of its derived files (data imported before that
// relation existed), or with one lacking a column added since, gets it, staged, keyed and renamed into place; files
// without visitor keys get them; whole fragments are marked. Compaction changes no answer, only speed: partitions of
// many small files are rewritten as one, and their fragments marked again. `npm start` runs the upgrade before it
// listens and compaction after, in the background.
//   by hand: ANALYTICS_DATA_DIR=./.data npx tsx cli/backfill-cli.ts

/**
 * The upgrade and then compaction (from `compactFrom` event files per partition on: by default
 * ANALYTICS_COMPACT_FROM_FILES, else COMPACT_FROM_FILES). Returns the number of derived files the upgrade wrote.
 */
export async function backfillDerived(paths: LocalPaths, options: { compactFrom?: number } = {}): Promise<number> {
  const written = await upgradeStore(paths);
  await compactStore(paths, options);
  return written;
}

/** The upgrade: missing or outdated derived files, missing keys, whole marks. Returns the derived files written. */
export async function upgradeStore(paths: LocalPaths): Promise<number> {
  return withStoreTransaction(paths, async (snapshot) => {
    const written = await deriveMissing(snapshot);
    // deriveMissing keys stored files only when it wrote some: files written without keys are keyed here.
    const keyed = written === 0 ? await keyVisitors(snapshot) : 0;
    const marked = await markWholeFragments(snapshot);
    return { value: written, changed: written + keyed + marked > 0 };
  });
}

/**
 * Compaction of the partitions holding `compactFrom` event files or more; returns how many were compacted. An abort
 * of `signal` ends it between two partitions, publishing nothing.
 */
export async function compactStore(
  paths: LocalPaths,
  options: { compactFrom?: number; signal?: AbortSignal } = {},
): Promise<number> {
  const compactFrom = options.compactFrom ?? Number(process.env.ANALYTICS_COMPACT_FROM_FILES ?? COMPACT_FROM_FILES);
  return withStoreTransaction(paths, async (snapshot) => {
    const compacted = await compactPartitions(snapshot, compactFrom, options.signal);
    // A compacted partition's sessions are one fragment a day now: marked whole where they have no other day.
    const marked = compacted > 0 ? await markWholeFragments(snapshot) : 0;
    return { value: compacted, changed: compacted + marked > 0 };
  });
}

/** A store step that `npm start` runs while other processes may hold the store lock. */
export interface RetriedStep<T> {
  /** The first attempt's result; null when another process held the lock (the step then retries). */
  readonly first: Promise<T | null>;
  /** Settles when the step has run, failed or was stopped (then with null). */
  readonly done: Promise<T | null>;
  /** Ends the retries and aborts a running attempt (its transaction publishes nothing); settles when it has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `step` at once and, while another process holds the store lock, again every `retryMs` until it runs: a store
 * upgraded during an import gets its missing files within seconds of it. Errors other than a busy store or the
 * step's abort go to `onError` and end the step.
 */
export function whenStoreFree<T>(
  step: (signal: AbortSignal) => Promise<T>,
  retryMs = 5_000,
  onError: (error: Error) => void = () => {},
): RetriedStep<T> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let settle: (value: T | null) => void = () => {};
  const done = new Promise<T | null>((resolve) => (settle = resolve));
  const attempt = (): Promise<T | null> => {
    const run = step(abort.signal).catch((error: unknown) => {
      if (error instanceof StoreBusyError && !abort.signal.aborted) return null;
      if (!abort.signal.aborted) onError(error as Error);
      settle(null);
      return null;
    });
    running = run;
    return run;
  };
  const after = (value: T | null) => {
    if (value !== null) settle(value);
    else if (!abort.signal.aborted) {
      timer = setTimeout(() => void attempt().then(after), retryMs);
      timer.unref();
    }
  };
  const first = attempt();
  void first.then(after);
  return {
    first,
    done,
    stop: async () => {
      abort.abort();
      clearTimeout(timer);
      await running;
      settle(null);
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
  const stagingDirs = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(staging, r.folder)])) as Record<
    DerivedFolder,
    string
  >;
  try {
    // A derived file without its event file (in a store written by an older version, which published files one by
    // one) would count its rows twice beside the files derived from a new event file: removed.
    const eventFiles = new Set(parquetFilesUnder(paths.eventsDir));
    for (const { folder } of derivedRelations) {
      for (const name of parquetFilesUnder(paths.derivedDirs[folder]).filter((n) => !eventFiles.has(n)))
        await rm(join(paths.derivedDirs[folder], name));
    }
    const outdated = await filesLackingColumns(connection, paths);
    const missing = [...eventFiles]
      .map((name) => ({
        name,
        folders: derivedRelations
          .map((r) => r.folder)
          .filter((f) => !existsSync(join(paths.derivedDirs[f], name)) || outdated[f].has(name)),
      }))
      .filter((m) => m.folders.length > 0);
    if (missing.length === 0) return 0;
    for (const { name, folders } of missing) {
      await writeDerived(
        connection,
        `read_parquet(${pathLiteral(join(paths.eventsDir, name))})`,
        name,
        stagingDirs,
        localCodecs(),
        { only: folders },
      );
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
async function filesLackingColumns(
  connection: DuckDBConnection,
  paths: LocalPaths,
): Promise<Record<DerivedFolder, Set<string>>> {
  const lacking = {} as Record<DerivedFolder, Set<string>>;
  for (const { folder, columns } of derivedRelations) {
    lacking[folder] = new Set();
    const dir = paths.derivedDirs[folder];
    if (parquetFilesUnder(dir).length === 0) continue;
    const schemas = (
      await connection.runAndReadAll(
        `SELECT file_name, list(name) AS names FROM parquet_schema(${pathLiteral(join(dir, '*', '*', '*.parquet'))}) GROUP BY 1`,
      )
    ).getRowObjectsJS();
    for (const { file_name, names } of schemas as { file_name: string; names: string[] }[]) {
      if (columns.some(([column]) => !names.includes(column))) lacking[folder].add(relative(dir, file_name));
    }
  }
  return lacking;
}
