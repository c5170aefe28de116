import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { derivedRelations, fragmentTwinRelations } from '../../shared/events/derived-relations.js';
import { isDayFolder, isDomainFolder } from './partition-names.js';

// The local store is a sequence of immutable snapshots (docs/STORAGE.md, "Publishing"): `snapshots/<seq>/` holds
// the events, the derived relations and the import records, and `current` is a symbolic link to the one readers
// see. A writer copies the current snapshot as hard links (no file data is copied), changes its copy only by
// adding, removing and renaming files (never writing into a file another snapshot links), and publishes it by
// replacing `current` with one rename. A process that dies before that rename leaves `current` as it was; one that
// dies after it has published everything. Whatever moment it dies, readers see the store before or after, whole.

/** The folders of a snapshot that hold Parquet partitions. */
export const PARTITIONED_FOLDERS = [
  'events',
  ...derivedRelations.map((r) => r.folder),
  ...fragmentTwinRelations.map((r) => r.folder),
] as const;
/** Import records (imports.ts): one file per import, part of the snapshot, so an import and its record publish together. */
export const IMPORTS_FOLDER = 'imports';

const SEQ_DIGITS = 10;
/** A snapshot replaced this long ago may still be read by a query that started before; older ones are removed. */
export const RETIRED_GRACE_MS = 10 * 60_000;
const RETIRED_MARK = '.retired';

export interface SnapshotLayout {
  dataDir: string;
  snapshotsDir: string;
  /** The link readers follow. */
  currentLink: string;
}

export function snapshotLayout(dataDir: string): SnapshotLayout {
  return { dataDir, snapshotsDir: join(dataDir, 'snapshots'), currentLink: join(dataDir, 'current') };
}

/** The current snapshot's folder, or null before the store's first one. */
export function currentSnapshot(layout: SnapshotLayout): string | null {
  try {
    return join(layout.snapshotsDir, readlinkSync(layout.currentLink).split('/').pop()!);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Makes sure a current snapshot exists: an empty first one, or, for a data folder written before snapshots
 * existed (its partition folders right under it), one made of those folders, moved in by renames. A stop midway
 * leaves no `current`, and the next call moves the folders still left.
 */
export function ensureCurrent(layout: SnapshotLayout): void {
  if (currentSnapshot(layout)) return;
  const first = join(layout.snapshotsDir, seqName(1));
  mkdirSync(first, { recursive: true });
  for (const folder of PARTITIONED_FOLDERS) {
    const legacy = join(layout.dataDir, folder);
    if (existsSync(legacy) && !existsSync(join(first, folder))) renameSync(legacy, join(first, folder));
  }
  point(layout, first);
}

/**
 * A new snapshot: the current one's files linked into a folder of the next number. Partition folders whose names
 * no writer makes (a hand-made folder, or one written by an older version's bug) are left out and reported, so
 * they cannot break the readers' views.
 */
export function copyCurrent(layout: SnapshotLayout, onSkipped: (path: string) => void = () => {}): string {
  const current = currentSnapshot(layout);
  if (!current) throw new Error('the store has no current snapshot (ensureCurrent first)');
  const next = join(layout.snapshotsDir, seqName(seqOf(current) + 1));
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next);
  for (const folder of PARTITIONED_FOLDERS) {
    const from = join(current, folder);
    mkdirSync(join(next, folder));
    if (!existsSync(from)) continue;
    for (const domain of readdirSync(from)) {
      if (!isDomainFolder(domain) || !isDir(join(from, domain))) {
        onSkipped(join(folder, domain));
        continue;
      }
      for (const dt of readdirSync(join(from, domain))) {
        const partition = join(domain, dt);
        if (!isDayFolder(dt) || !isDir(join(from, partition))) {
          onSkipped(join(folder, partition));
          continue;
        }
        mkdirSync(join(next, folder, partition), { recursive: true });
        for (const file of readdirSync(join(from, partition))) {
          if (file.endsWith('.parquet')) linkSync(join(from, partition, file), join(next, folder, partition, file));
        }
      }
    }
  }
  const imports = join(current, IMPORTS_FOLDER);
  mkdirSync(join(next, IMPORTS_FOLDER));
  if (existsSync(imports))
    for (const file of readdirSync(imports)) linkSync(join(imports, file), join(next, IMPORTS_FOLDER, file));
  return next;
}

/** Makes `snapshot` the current one (one rename of the link) and marks the one it replaces retired. */
export function publish(layout: SnapshotLayout, snapshot: string): void {
  // `current` never names a folder that is not there.
  if (!statSync(snapshot, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`cannot publish ${snapshot}: no such snapshot`);
  const previous = currentSnapshot(layout);
  point(layout, snapshot);
  if (previous && previous !== snapshot) writeFileSync(join(previous, RETIRED_MARK), new Date().toISOString());
}

/**
 * Removes the snapshots no reader can be using: those left unpublished by a writer that stopped (only called
 * under the store lock, so no other writer is building one), and those retired over RETIRED_GRACE_MS ago.
 */
export function collectSnapshots(layout: SnapshotLayout, now = Date.now()): number {
  const current = currentSnapshot(layout);
  // With `current` naming no folder (a store damaged by hand), nothing is removed: the last good snapshot stays.
  if (!current || !existsSync(current) || !existsSync(layout.snapshotsDir)) return 0;
  let removed = 0;
  for (const name of readdirSync(layout.snapshotsDir)) {
    const dir = join(layout.snapshotsDir, name);
    if (dir === current) continue;
    const retired = join(dir, RETIRED_MARK);
    const unpublished = !existsSync(retired) && /^\d+$/.test(name) && seqOf(dir) > seqOf(current);
    const expired = existsSync(retired) && now - statSync(retired).mtimeMs > RETIRED_GRACE_MS;
    // A snapshot older than the current one without a mark was replaced by a writer that died right after its
    // rename: retired now, removed after the grace period.
    if (!existsSync(retired) && !unpublished) writeFileSync(retired, new Date(now).toISOString());
    if (unpublished || expired || !/^\d+$/.test(name)) {
      rmSync(dir, { recursive: true, force: true });
      removed += 1;
    }
  }
  return removed;
}

function point(layout: SnapshotLayout, snapshot: string): void {
  const temporary = `${layout.currentLink}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  symlinkSync(join('snapshots', snapshot.split('/').pop()!), temporary);
  renameSync(temporary, layout.currentLink);
}

function seqName(seq: number): string {
  return String(seq).padStart(SEQ_DIGITS, '0');
}

function seqOf(dir: string): number {
  return Number(dir.split('/').pop());
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
