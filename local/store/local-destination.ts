import { mkdir, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { derivedRelations } from '../../shared/events/derived-relations.js';
import type { ImportDestination, StagedImport } from '../../writer/destination.js';
import {
  importEvents as importEventsTo,
  importLineBlocks as importLineBlocksTo,
  importLines as importLinesTo,
  importNdjson as importNdjsonTo,
  type ImportOptions,
  type ImportReport,
} from '../../writer/importer.js';
import { localCodecs } from '../../writer/parquet-codec.js';
import { pathsOfSnapshot, type LocalPaths } from './paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { currentSnapshot, snapshotLayout } from './snapshots.js';
import { deriveMissing } from './backfill.js';
import { hasImportRecord, recordUsage, writeImportRecord } from './imports.js';
import { recordStoreLayout, storedDaysOf } from './store-days.js';
import { withStoreTransaction } from './local-store.js';
import { keysBeforeLock, areKeysCurrent, keyVisitors } from './visitor-keys.js';
import { markWholeFragments } from './whole-fragments.js';

// The local snapshot store as an import's destination (writer/destination.ts): an import is published in one store
// transaction (store/local-store.ts), visible whole or not at all, with its record in the snapshot it publishes.
// Buckets are keyed and fragments marked as the importer writes them, from the snapshot current at that moment.

export function localDestination(paths: LocalPaths): ImportDestination {
  return {
    store: 'local',
    codecs: localCodecs(),
    stagingDir: paths.stagingDir,
    // A transaction publishes an import whole: its files need no name a retry would overwrite.
    fileName: () => undefined,
    importedBefore: async (digest) => {
      // The current snapshot's paths: a record there means the same input was imported before. Usage not counted
      // yet (a process died between publishing and counting) is counted now.
      if (!hasImportRecord(paths, digest)) return false;
      await recordUsage(paths);
      return true;
    },
    // The record is checked again under the lock (publish): another writer may import the same input meanwhile.
    settleImported: async () => false,
    storedDays: async (domain) => storedDaysOf(paths, domain),
    visitorKeys: {
      // The snapshot current now, read at once: a snapshot another writer retires is removed minutes later.
      before: async (connection, domain, needed, table) =>
        (await keysBeforeLock(connection, currentSnapshotPaths(paths), domain, needed, table)).fingerprint,
    },
    publish: async (staged, keyFingerprints) => {
      const published = await withStoreTransaction(paths, async (snapshot) => {
        const moved = await publishInto(snapshot, staged, keyFingerprints);
        return { value: moved, changed: moved };
      });
      await recordUsage(paths);
      if (published) await recordStoreLayout(paths, Object.keys(staged.record.domains));
      return published;
    },
  };
}

/** Moves an import's staged files into the snapshot copy at `snapshot`, with keys, marks and record; false if recorded. */
async function publishInto(
  snapshot: LocalPaths,
  staged: StagedImport,
  keyFingerprints: ReadonlyMap<string, string>,
): Promise<boolean> {
  const { digest } = staged.record;
  if (hasImportRecord(snapshot, digest)) return false;
  // A store written by an older version is brought up to date first, as the backfill would (once: then it
  // finds nothing to do), so no fragment is marked whole without its paths.
  const upgraded = await deriveMissing(snapshot);
  const domains = Object.keys(staged.record.domains);
  // The keys the import gave hold unless another writer changed the domains' keyed files since; else the
  // staged buckets are keyed again from this snapshot before they are moved in.
  const keysHold = [...keyFingerprints].every(([domain, fingerprint]) => areKeysCurrent(snapshot, domain, fingerprint));
  if (!keysHold) await keyVisitors(snapshot, { pending: staged.derivedDirs, domains });
  await moveInto(staged.eventsDir, staged.files, snapshot.eventsDir);
  for (const { folder } of derivedRelations)
    await moveInto(
      staged.derivedDirs[folder],
      parquetFilesUnder(staged.derivedDirs[folder]),
      snapshot.derivedDirs[folder],
    );
  // Stored files of older versions without keys are keyed after the import's own, so no key is given twice.
  if (keysHold) await keyVisitors(snapshot, { domains });
  // The import marked its fragments by its own rows; this pass corrects the marks of the sessions it shares
  // with the store (only those gained fragments). Files derived again for an upgrade are written not whole, in
  // any domain: then every domain is marked.
  await markWholeFragments(snapshot, upgraded > 0 ? {} : { domains, sessionsOf: staged.files });
  writeImportRecord(snapshot, staged.record);
  return true;
}

/** The paths of the store's current snapshot as it is now (not its `current` link, which a writer may move), or null before its first. */
function currentSnapshotPaths(paths: LocalPaths): LocalPaths | null {
  const snapshot = currentSnapshot(snapshotLayout(paths.dataDir));
  return snapshot ? pathsOfSnapshot(paths, snapshot) : null;
}

/** Moves every staged file to the same relative place under `dir` (a rename: never half a file). */
async function moveInto(stagingDir: string, files: string[], dir: string): Promise<void> {
  for (const name of files) {
    const target = join(dir, name);
    await mkdir(dirname(target), { recursive: true });
    await rename(join(stagingDir, name), target);
  }
}

// The importer's entry points with the local store at `paths` as their destination.

export const importNdjson = (file: string, paths: LocalPaths, options?: ImportOptions): Promise<ImportReport> =>
  importNdjsonTo(file, localDestination(paths), options);
export const importLines = (
  lines: AsyncIterable<string>,
  paths: LocalPaths,
  options?: ImportOptions,
): Promise<ImportReport> => importLinesTo(lines, localDestination(paths), options);
export const importLineBlocks = (
  blocks: AsyncIterable<Uint8Array>,
  paths: LocalPaths,
  options?: ImportOptions,
): Promise<ImportReport> => importLineBlocksTo(blocks, localDestination(paths), options);
export const importEvents = (events: unknown[], paths: LocalPaths, options?: ImportOptions): Promise<ImportReport> =>
  importEventsTo(events, localDestination(paths), options);
