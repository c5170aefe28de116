import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalPaths } from './paths.js';

// One writer of the derived relations at a time per data folder: the import's publish step and the backfill
// decide which session fragments are whole from what the store holds, so two of them at once could each mark
// a fragment of the same session whole. A folder made with mkdir is the lock (atomic); a lock left by a process
// that no longer runs is taken over.

export class StoreBusyError extends Error {}

/** Callers in this process queue behind one another; another process holding the lock is an error. */
const queues = new Map<string, Promise<unknown>>();

export async function withStoreLock<T>(paths: LocalPaths, work: () => Promise<T>): Promise<T> {
  const lock = join(paths.dataDir, 'store.lock');
  const previous = queues.get(lock) ?? Promise.resolve();
  const run = previous.catch(() => {}).then(async () => {
    take(lock);
    try {
      return await work();
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  });
  queues.set(lock, run);
  try {
    return await run;
  } finally {
    if (queues.get(lock) === run) queues.delete(lock);
  }
}

function take(lock: string): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      mkdirSync(lock, { recursive: false });
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readSafe(join(lock, 'pid')));
      if (holder && alive(holder)) {
        throw new StoreBusyError(`another import or backfill (pid ${holder}) is writing ${lock.slice(0, -'/store.lock'.length)}; try again when it is done`);
      }
      rmSync(lock, { recursive: true, force: true });
    }
  }
  throw new StoreBusyError(`could not lock ${lock}`);
}

function readSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
