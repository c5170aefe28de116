import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { writeDerived } from './derived-writer.js';
import { localPaths, type LocalPaths } from './paths.js';
import { withStoreLock } from './store-lock.js';
import { keyVisitors } from './visitor-keys.js';
import { markWholeFragments } from './whole-fragments.js';

// Writes the missing derived files of a local store: every event file without its session fragments or pageview
// buckets (data imported before they existed) gets them, staged, keyed and then renamed into place; then the
// whole fragments are marked. An event file and its derived files are all that must correspond (docs/STORAGE.md).
//   ANALYTICS_DATA_DIR=./.data npx tsx local/backfill-derived.ts

/**
 * Returns the number of derived files written. Then keys the buckets and marks whole session fragments (which
 * also upgrades files written before keys or `whole` existed), under the store lock like an import.
 */
export async function backfillDerived(paths: LocalPaths): Promise<number> {
  return withStoreLock(paths, async () => {
    const written = await writeMissing(paths);
    await keyVisitors(paths);
    await markWholeFragments(paths);
    return written;
  });
}

async function writeMissing(paths: LocalPaths): Promise<number> {
  if (!existsSync(paths.eventsDir)) return 0;
  const events = (readdirSync(paths.eventsDir, { recursive: true, encoding: 'utf8' }) as string[]).filter((name) => name.endsWith('.parquet'));
  const missing = events
    .map((name) => ({ name, folders: derivedRelations.map((r) => r.folder).filter((f) => !existsSync(join(paths.derivedDirs[f], name))) }))
    .filter((m) => m.folders.length > 0);
  if (missing.length === 0) return 0;
  const instance = await DuckDBInstance.create(':memory:', { threads: String(process.env.DUCKDB_THREADS ?? 2) });
  const connection = await instance.connect();
  const staging = join(paths.stagingDir, `backfill-${process.pid}`);
  const stagingDirs = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(staging, r.folder)])) as Record<DerivedFolder, string>;
  let written = 0;
  try {
    for (const { name, folders } of missing) {
      await writeDerived(connection, `read_parquet(${pathLiteral(join(paths.eventsDir, name))})`, name, stagingDirs, folders);
    }
    // Keyed while staged, so no reader ever sees a bucket file without keys.
    await keyVisitors(paths, { pending: stagingDirs });
    for (const { name, folders } of missing) {
      for (const folder of folders) {
        await mkdir(dirname(join(paths.derivedDirs[folder], name)), { recursive: true });
        await rename(join(stagingDirs[folder], name), join(paths.derivedDirs[folder], name));
        written += 1;
      }
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(staging, { recursive: true, force: true });
  }
  return written;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const written = await backfillDerived(localPaths());
  console.log(`${written} derived files written`);
}
