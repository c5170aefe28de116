import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { forgetImportCount, recordImportedEventsOnce } from '../../shared/limits/limiter.js';
import type { LocalPaths } from './paths.js';
import type { ImportRecord } from '../../writer/destination.js';

// What the store has imported (docs/STORAGE.md, "Imports are idempotent"). An import is identified by the SHA-256 of
// its input: the bytes of an NDJSON file, or its lines as the importer read them. Its record is a file in the
// snapshot it published, so the rows and the record appear together, and an input whose record exists adds
// nothing. Usage is counted once per record: DynamoDB refuses a second count of the same digest
// (recordImportedEventsOnce), and a marker beside the snapshots says it was counted, so an import whose process
// died between publishing and counting is counted by the next import.

export function hasImportRecord(snapshot: LocalPaths, digest: string): boolean {
  return existsSync(recordFile(snapshot, digest));
}

export function writeImportRecord(snapshot: LocalPaths, record: ImportRecord): void {
  mkdirSync(snapshot.importsDir, { recursive: true });
  writeFileSync(recordFile(snapshot, record.digest), JSON.stringify(record));
}

/** Counts the rows of every import of the current snapshot not counted yet toward each domain's usage. */
export async function recordUsage(paths: LocalPaths): Promise<void> {
  const pending = existsSync(paths.importsDir)
    ? readdirSync(paths.importsDir).filter(
        (name) => name.endsWith('.json') && !existsSync(counted(paths, name.slice(0, -5))),
      )
    : [];
  mkdirSync(countedDir(paths), { recursive: true });
  for (const name of pending) {
    const r = JSON.parse(readFileSync(join(paths.importsDir, name), 'utf8')) as ImportRecord;
    for (const [domain, rows] of Object.entries(r.domains))
      await recordImportedEventsOnce(domain, rows, r.digest, new Date(r.at));
    const temporary = `${counted(paths, r.digest)}.${process.pid}.tmp`;
    writeFileSync(temporary, r.at);
    renameSync(temporary, counted(paths, r.digest));
    // The marker now stops a second count: the month's item need not keep the digest.
    for (const domain of Object.keys(r.domains)) await forgetImportCount(domain, r.digest, new Date(r.at));
  }
}

function recordFile(snapshot: LocalPaths, digest: string): string {
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error('an import digest is 64 hex digits');
  return join(snapshot.importsDir, `${digest}.json`);
}

function countedDir(paths: LocalPaths): string {
  return join(paths.dataDir, 'usage-counted');
}

function counted(paths: LocalPaths, digest: string): string {
  return join(countedDir(paths), digest);
}
