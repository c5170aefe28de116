import { mkdirSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { HIVE_PARTITIONS, pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { sessionCountsRelation } from '../../shared/events/derived-relations.js';
import { sessionCountsOf } from '../../shared/query/derived/session-counts.js';
import { print, trusted } from '../../shared/query/sql/sql.js';
import { localCodecs, parquetCopyOptions } from './parquet-codec.js';
import { parquetFilesUnder, type LocalPaths } from './paths.js';
import { openScratchDuckDb } from './scratch-duckdb.js';

// The session counts (shared/query/derived/session-counts.ts, docs/STORAGE.md) are a function of the fragment
// files as marked: one counts file per fragment file, in the same `domain=/dt=` folder, named after the fragment
// file it was counted from: its name, inode and size. A fragment file is never written into, only added, replaced
// by a rename (a new inode) or removed, so a counts file whose name matches a fragment file's present name, inode
// and size was counted from that very file. Every store transaction brings the counts up to date this way before
// it publishes (store/local-store.ts), whichever writer changed the fragments: a published snapshot's counts
// always match its fragments, and a snapshot written before the counts existed has no counts folder (the engine
// then computes them from the fragments).

/** The counts file of a fragment file (a path relative to the sessions folder), from its inode and size. */
function countsFileOf(fragmentFile: string, sessionsDir: string): string {
  const { ino, size } = statSync(join(sessionsDir, fragmentFile));
  return join(dirname(fragmentFile), `${basename(fragmentFile, '.parquet')}.${ino}-${size}.parquet`);
}

/**
 * Writes the counts files missing for the fragment files of the snapshot at `paths` and removes those of fragment
 * files gone or replaced; creates the counts folder if it is missing. Returns the files written and removed
 * (plus one for a folder created): more than zero means the snapshot changed.
 */
export async function syncSessionCounts(paths: LocalPaths): Promise<number> {
  const sessionsDir = paths.derivedDirs.sessions;
  const countsDir = paths.sessionCountsDir;
  let changes = 0;
  try {
    statSync(countsDir);
  } catch {
    mkdirSync(countsDir, { recursive: true });
    changes += 1;
  }
  const wanted = new Map(parquetFilesUnder(sessionsDir).map((file) => [countsFileOf(file, sessionsDir), file]));
  const present = new Set(parquetFilesUnder(countsDir));
  for (const file of present) {
    if (wanted.has(file)) continue;
    rmSync(join(countsDir, file));
    removeIfEmpty(dirname(join(countsDir, file)), countsDir);
    changes += 1;
  }
  const missing = [...wanted].filter(([countsFile]) => !present.has(countsFile));
  if (missing.length === 0) return changes;
  const scratch = await openScratchDuckDb();
  try {
    const { connection } = scratch;
    const sources = missing.map(([, fragmentFile]) => pathLiteral(join(sessionsDir, fragmentFile)));
    // One scan of every fragment file to count, then a small file each. union_by_name: a file of an older version
    // without `whole` counts nothing (the marks pass gives it the column before any transaction publishes).
    const fragments = `read_parquet([${sources.join(', ')}], ${HIVE_PARTITIONS}, union_by_name = true, filename = true)`;
    await connection.run(`CREATE TABLE counted AS ${print(sessionCountsOf(trusted(fragments), ['filename'])).sql}`);
    const codec = localCodecs().sessions;
    const columns = sessionCountsRelation.columns.map(([name]) => name).join(', ');
    for (const [countsFile, fragmentFile] of missing) {
      const target = join(countsDir, countsFile);
      mkdirSync(dirname(target), { recursive: true });
      const source = join(sessionsDir, fragmentFile).replaceAll("'", "''");
      await connection.run(
        `COPY (SELECT ${columns} FROM counted WHERE filename = '${source}' ORDER BY ${columns})
         TO ${pathLiteral(target)} ${parquetCopyOptions(codec)}`,
      );
      changes += 1;
    }
  } finally {
    scratch.close();
  }
  return changes;
}

function removeIfEmpty(dir: string, root: string): void {
  for (let at = dir; at.startsWith(root) && at !== root; at = dirname(at)) {
    if (readdirSync(at).length > 0) return;
    rmdirSync(at);
  }
}
