import { mkdirSync, readdirSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { HIVE_PARTITIONS, pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { fragmentTwinRelations, type FragmentTwinFolder } from '../../shared/events/derived-relations.js';
import { sessionCountsOf } from '../../shared/query/derived/session-counts.js';
import { fragmentFileOrder, unmarkedFragmentsOf } from '../../shared/query/derived/session-fragments.js';
import { print, trusted } from '../../shared/query/sql/sql.js';
import { localCodecs, relationCopyOptions } from '../../writer/parquet-codec.js';
import { type LocalPaths } from './paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';

// The fragment twins (docs/STORAGE.md, "Fragment twins": the session counts and the unmarked fragments) are a
// function of the fragment files as marked: a file of each per fragment file, in the same `domain=/dt=` folder,
// named after the fragment file it was derived from: its name, inode and size. A fragment file is never written
// into, only added, replaced by a rename (a new inode) or removed, so a twin whose name matches a fragment file's
// present name, inode and size was derived from that very file. Every store transaction brings the twins up to
// date this way before it publishes (store/local-store.ts), whichever writer changed the fragments: a published
// snapshot's twins always match its fragments, and a snapshot written before a twin relation existed has no
// folder for it (the engine then computes it from the fragments).

/** The twin name of a fragment file (a path relative to the sessions folder), from its inode and size. */
function twinNameOf(fragmentFile: string, sessionsDir: string): string {
  const { ino, size } = statSync(join(sessionsDir, fragmentFile));
  return join(dirname(fragmentFile), `${basename(fragmentFile, '.parquet')}.${ino}-${size}.parquet`);
}

/**
 * Writes the twins missing for the fragment files of the snapshot at `paths` and removes those of fragment files
 * gone or replaced. Returns the files written and removed: more than zero means the snapshot changed.
 */
export async function syncFragmentTwins(paths: LocalPaths): Promise<number> {
  const sessionsDir = paths.derivedDirs.sessions;
  const wanted = new Map(parquetFilesUnder(sessionsDir).map((file) => [twinNameOf(file, sessionsDir), file]));
  let changes = 0;
  const missing = new Map<FragmentTwinFolder, [twin: string, fragmentFile: string][]>();
  for (const { folder } of fragmentTwinRelations) {
    const dir = paths.twinDirs[folder];
    mkdirSync(dir, { recursive: true });
    const present = new Set(parquetFilesUnder(dir));
    for (const file of present) {
      if (wanted.has(file)) continue;
      rmSync(join(dir, file));
      removeIfEmpty(dirname(join(dir, file)), dir);
      changes += 1;
    }
    missing.set(
      folder,
      [...wanted].filter(([twin]) => !present.has(twin)),
    );
  }
  const toCount = missing.get('session_counts')!;
  const toSplit = missing.get('unmarked_fragments')!;
  if (toCount.length + toSplit.length === 0) return changes;
  const scratch = await openScratchDuckDb();
  try {
    const { connection } = scratch;
    const codecs = localCodecs();
    const write = async (folder: FragmentTwinFolder, twin: string, select: string) => {
      const target = join(paths.twinDirs[folder], twin);
      mkdirSync(dirname(target), { recursive: true });
      await connection.run(`COPY (${select}) TO ${pathLiteral(target)} ${relationCopyOptions(codecs, 'sessions')}`);
      changes += 1;
    };
    // Each relation: one pass over the fragment files it lacks, into a table, then a small file each from it.
    const scan = (files: [string, string][]) =>
      trusted(
        `read_parquet([${files.map(([, fragmentFile]) => pathLiteral(join(sessionsDir, fragmentFile))).join(', ')}], ${HIVE_PARTITIONS}, filename = true)`,
      );
    const ofFile = (fragmentFile: string) => `filename = ${pathLiteral(join(sessionsDir, fragmentFile))}`;
    if (toCount.length) {
      await connection.run(
        `CREATE TABLE counted AS ${print(sessionCountsOf(scan(toCount), ['filename'], 'grouping-sets')).sql}`,
      );
      const columns = twinColumns('session_counts');
      for (const [twin, fragmentFile] of toCount) {
        await write(
          'session_counts',
          twin,
          `SELECT ${columns} FROM counted WHERE ${ofFile(fragmentFile)} ORDER BY ${columns}`,
        );
      }
    }
    if (toSplit.length) {
      await connection.run(`CREATE TABLE unmarked AS ${print(unmarkedFragmentsOf(scan(toSplit), ['filename'])).sql}`);
      for (const [twin, fragmentFile] of toSplit) {
        await write(
          'unmarked_fragments',
          twin,
          `SELECT ${twinColumns('unmarked_fragments')} FROM unmarked WHERE ${ofFile(fragmentFile)} ORDER BY ${fragmentFileOrder}`,
        );
      }
    }
  } finally {
    scratch.close();
  }
  return changes;
}

function twinColumns(folder: FragmentTwinFolder): string {
  return fragmentTwinRelations
    .find((r) => r.folder === folder)!
    .columns.map(([name]) => name)
    .join(', ');
}

function removeIfEmpty(dir: string, root: string): void {
  for (let at = dir; at.startsWith(root) && at !== root; at = dirname(at)) {
    if (readdirSync(at).length > 0) return;
    rmdirSync(at);
  }
}
