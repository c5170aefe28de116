import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalPaths } from './paths.js';

// One writer at a time per data folder (docs/SECURITY.md, "The store lock"): imports, backfills and compactions
// publish snapshots, and two at once could publish over each other. The lock is the file `store.lock`, holding its
// owner: the process id and the process's start (its start time since boot and the boot's id, read from /proc), so
// a lock whose pid now names another process is known to be stale.
//   - Taking it is one exclusive create that already holds the owner: the record is written to a file of our own,
//     then hard-linked as `store.lock`; link fails if the name exists, so two takers can never both succeed, and no
//     taker ever sees a lock without its owner.
//   - A stale lock (its owner no longer runs) is taken over under a second exclusive name, `store.lock.takeover`,
//     held for the few microseconds of the check and one rename that replaces the stale file with ours; only the
//     taker holding that name may replace, and it replaces only the very record it found stale.
//   - Releasing removes the lock only if it still holds our record.

export class StoreBusyError extends Error {}

export interface Owner {
  pid: number;
  /** `<boot id>:<start time in clock ticks>`, or '' where /proc does not say. */
  start: string;
}

/** A takeover name left by a taker that died while holding it (it holds it for microseconds) is cleared after this. */
const STALE_TAKEOVER_MS = 10_000;

/** Callers in this process queue behind one another; another process holding the lock is an error. */
const queues = new Map<string, Promise<unknown>>();

export async function withStoreLock<T>(paths: LocalPaths, work: () => Promise<T>): Promise<T> {
  const lock = join(paths.dataDir, 'store.lock');
  const previous = queues.get(lock) ?? Promise.resolve();
  const run = previous
    .catch(() => {})
    .then(async () => {
      const record = takeStoreLock(lock);
      try {
        return await work();
      } finally {
        releaseStoreLock(lock, record);
      }
    });
  queues.set(lock, run);
  try {
    return await run;
  } finally {
    if (queues.get(lock) === run) queues.delete(lock);
  }
}

/** Takes the lock at `lock` for this process, or throws StoreBusyError; returns the record it wrote. */
export function takeStoreLock(lock: string, owner: Owner = thisProcess()): string {
  const record = `${JSON.stringify({ ...owner, token: randomBytes(8).toString('hex') })}\n`;
  const mine = `${lock}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(mine, record, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (exclusiveLink(mine, lock)) return record;
      const found = readSafe(lock);
      if (found === undefined) {
        clearLegacyLock(lock);
        continue; // released meanwhile: try again
      }
      const holder = parseOwner(found);
      if (holder && running(holder)) throw busy(lock, holder.pid);
      // Stale: replace exactly that record, under the takeover name.
      const takeover = `${lock}.takeover`;
      if (!exclusiveLink(mine, takeover)) {
        clearStaleTakeover(takeover);
        throw busy(lock);
      }
      try {
        if (readSafe(lock) !== found) continue; // someone else took it over first
        const replacement = `${mine}.replace`;
        linkSync(mine, replacement);
        renameSync(replacement, lock);
        return record;
      } finally {
        rmSync(takeover, { force: true });
      }
    }
    throw busy(lock);
  } finally {
    rmSync(mine, { force: true });
  }
}

/** Removes the lock if it still holds `record` (a lock taken over meanwhile is another's). */
export function releaseStoreLock(lock: string, record: string): void {
  if (readSafe(lock) === record) rmSync(lock, { force: true });
}

function exclusiveLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** An earlier version's lock was a folder holding `pid`: taken away (by one rename) once that process is gone. */
function clearLegacyLock(lock: string): void {
  try {
    if (!statSync(lock).isDirectory()) return;
  } catch {
    return;
  }
  const holder = parseOwner(readSafe(join(lock, 'pid')) ?? '');
  if (holder && running(holder)) throw busy(lock, holder.pid);
  const aside = `${lock}.legacy.${randomBytes(6).toString('hex')}`;
  try {
    renameSync(lock, aside);
  } catch {
    return;
  }
  rmSync(aside, { recursive: true, force: true });
}

function clearStaleTakeover(takeover: string): void {
  try {
    if (Date.now() - statSync(takeover).mtimeMs > STALE_TAKEOVER_MS) rmSync(takeover, { force: true });
  } catch {
    // gone meanwhile
  }
}

function busy(lock: string, pid?: number): StoreBusyError {
  const folder = lock.slice(0, -'/store.lock'.length);
  return new StoreBusyError(
    `another import, backfill or compaction${pid ? ` (pid ${pid})` : ''} is writing ${folder}; try again when it is done`,
  );
}

function readSafe(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parseOwner(text: string): Owner | undefined {
  // An older version's lock held a bare pid.
  if (/^\s*\d+\s*$/.test(text)) return { pid: Number(text), start: '' };
  try {
    const value = JSON.parse(text) as Partial<Owner>;
    return typeof value.pid === 'number' && typeof value.start === 'string'
      ? { pid: value.pid, start: value.start }
      : undefined;
  } catch {
    return undefined;
  }
}

/** This process as a lock owner. */
export function thisProcess(): Owner {
  return { pid: process.pid, start: startOf(process.pid) };
}

/** Whether `owner` still runs: its pid is alive and, where /proc tells, was started when the lock says. */
export function running(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return owner.start === '' || startOf(owner.pid) === owner.start;
}

/** `<boot id>:<start ticks>` of a process from /proc (Linux), or '' elsewhere. */
function startOf(pid: number): string {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime) counts from after the command's closing parenthesis, which may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return `${boot}:${fields[19]}`;
  } catch {
    return '';
  }
}
