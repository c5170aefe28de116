import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { logger } from '../../shared/log.js';
import { pathsOfSnapshot, type LocalPaths } from './paths.js';
import { withStoreLock } from './store-lock.js';
import { collectSnapshots, copyCurrent, ensureCurrent, publish, snapshotLayout } from './snapshots.js';
import { syncFragmentTwins } from './fragment-twins.js';

// The one way anything changes the local store: under the store lock, a writer gets a copy of the current
// snapshot to change (its paths), and the copy is published whole when the writer returns `changed`, or thrown
// away when it throws or changes nothing. Imports, the backfill, compaction and the whole-fragment marks all run
// through here, so every one of them is visible whole or not at all, whatever moment its process dies. Before a
// copy is published, the fragment twins are brought in line with its fragments (store/fragment-twins.ts).

export interface StoreChange<T> {
  value: T;
  changed: boolean;
}

export async function withStoreTransaction<T>(
  paths: LocalPaths,
  work: (snapshot: LocalPaths) => Promise<StoreChange<T>>,
): Promise<T> {
  return withStoreLock(paths, async () => {
    const layout = snapshotLayout(paths.dataDir);
    ensureCurrent(layout);
    recoverStaging(paths);
    collectSnapshots(layout);
    let skipped = 0;
    const next = copyCurrent(layout, (path) => {
      skipped += 1;
      logger.warn('left a partition folder with a name no writer makes out of the store', { path });
    });
    try {
      const snapshot = pathsOfSnapshot(paths, next);
      const { value, changed } = await work(snapshot);
      // Whatever the work changed, the relations derived from the marked fragments follow before anyone sees it;
      // a store written before they existed gets them in its next transaction (the backfill at every start).
      const synced = await syncFragmentTwins(snapshot);
      // A copy that left a folder out is published even when the work changed nothing: readers stop seeing it.
      if (changed || synced > 0 || skipped > 0) publish(layout, next);
      else rmSync(next, { recursive: true, force: true });
      return value;
    } catch (error) {
      rmSync(next, { recursive: true, force: true });
      throw error;
    }
  });
}

/**
 * Removes what stopped writers left in the staging folder: every entry is named `<pid>-...` by the process that
 * made it, and one whose process no longer runs is nobody's. Entries of other living processes (an import staging
 * its files before it takes the lock) stay.
 */
function recoverStaging(paths: LocalPaths): void {
  if (!existsSync(paths.stagingDir)) return;
  for (const name of readdirSync(paths.stagingDir)) {
    const pid = Number(/^(\d+)-/.exec(name)?.[1]);
    if (pid === process.pid) continue;
    if (!pid || !isProcessAlive(pid)) rmSync(join(paths.stagingDir, name), { recursive: true, force: true });
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A staging entry name owned by this process (recoverStaging removes it once the process is gone). */
export function stagingName(purpose: string): string {
  return `${process.pid}-${purpose}`;
}
