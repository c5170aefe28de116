import { UnwritableRows } from '../../writer/derived-writer.js';
import { logger } from '../../shared/log.js';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { writeCompacted } from '../../writer/compacted-file.js';
import { localCodecs } from '../../writer/parquet-codec.js';
import { type LocalPaths } from './paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { keyVisitors } from './visitor-keys.js';
import { stagingName } from './local-store.js';

// Compaction (docs/STORAGE.md): a partition that many imports wrote in many small files is rewritten as one event
// file in the event files' order, with its derived files made from it. Many files cost every query: per-file work,
// and sessions split across files are fragments to merge instead of whole ones. It changes a snapshot copy inside a
// store transaction (store/local-store.ts), so queries running meanwhile keep reading the snapshot they started on;
// whole fragments are marked afterwards.

/** A partition is compacted from this many event files on. One import writes one file per partition it touches. */
export const COMPACT_FROM_FILES = 8;

/**
 * Compacts every partition (`domain=/dt=` folder) of the snapshot at `paths` holding at least `minFiles` event
 * files; returns how many. Each relation's partition folder is replaced by its new one. An abort of `signal` throws
 * between two partitions.
 */
export async function compactPartitions(
  paths: LocalPaths,
  minFiles = COMPACT_FROM_FILES,
  signal?: AbortSignal,
): Promise<number> {
  const byPartition = new Map<string, string[]>();
  for (const name of parquetFilesUnder(paths.eventsDir)) {
    const partition = dirname(name);
    byPartition.set(partition, [...(byPartition.get(partition) ?? []), name]);
  }
  const crowded = [...byPartition].filter(([, names]) => names.length >= minFiles);
  if (crowded.length === 0) return 0;
  const staging = join(paths.stagingDir, stagingName('compact'));
  const scratch = await openScratchDuckDb();
  const { connection } = scratch;
  let skipped = 0;
  try {
    for (const [i, [partition, names]] of crowded.entries()) {
      signal?.throwIfAborted();
      const fresh = join(staging, `new-${i}`);
      const dirs = {
        events: join(fresh, 'events'),
        ...Object.fromEntries(derivedRelations.map((r) => [r.folder, join(fresh, r.folder)])),
      } as Record<'events' | DerivedFolder, string>;
      // One name for the partition's new files, unlike any import's (they start with a timestamp).
      const name = join(partition, `compacted-${Date.now()}.parquet`);
      try {
        await writeCompacted(
          connection,
          names.map((n) => join(paths.eventsDir, n)),
          name,
          dirs,
          'local',
          localCodecs(),
        );
      } catch (error) {
        // Its files stay as they are and answer as before; the other partitions are compacted.
        if (!(error instanceof UnwritableRows)) throw error;
        logger.warn('partition left uncompacted', { partition, reason: error.message });
        skipped += 1;
        continue;
      }
      // The partition's visitors keep their keys: the old files are still in place to look them up.
      const domain = partition.split('/')[0]!.slice('domain='.length);
      await keyVisitors(paths, { pending: dirs, domains: [domain] });
      const lives: ['events' | DerivedFolder, string][] = [
        ['events', paths.eventsDir],
        ...derivedRelations.map((r): [DerivedFolder, string] => [r.folder, paths.derivedDirs[r.folder]]),
      ];
      for (const [folder, live] of lives) {
        await rm(join(live, partition), { recursive: true, force: true });
        await mkdir(dirname(join(live, partition)), { recursive: true });
        await rename(join(dirs[folder], partition), join(live, partition));
      }
    }
    return crowded.length - skipped;
  } finally {
    scratch.close();
    await rm(staging, { recursive: true, force: true });
  }
}
