import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';
import { HIVE_PARTITIONS, pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { sessionFragmentColumns } from '../../shared/events/event-columns.js';
import { fragmentFileOrder } from '../../shared/query/derived/session-fragments.js';
import { domainsUnder, type LocalPaths } from './paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { localCodecs, relationCopyOptions, type StoreCodecs } from '../../writer/parquet-codec.js';
import { stagingName } from './local-store.js';

// Marks each stored session fragment `whole` exactly when it is its session's only fragment in the store
// (docs/STORAGE.md): queries read whole fragments as sessions without merging, and merge only the others.
// A local import writes its fragments marked by its own rows, other writers not whole; this pass rewrites the files
// whose flags differ from the store's truth.
//
// Imports add fragments, so a whole fragment can stop being whole: every writer runs this pass on its snapshot
// copy after adding its files, and the copy is published whole (store/local-store.ts), so a reader never sees a
// fragment marked whole beside another of its session. On S3 the upkeep marks the partitions it rewrites
// (ingest/s3-upkeep.ts), and a mark there holds only as of its run (StoreCatalog.wholeMarksExact).

const flagged = sessionFragmentColumns.map(([name]) => name).filter((name) => name !== 'whole');

/**
 * Rewrites the fragment files of the snapshot at `paths` whose `whole` flags are wrong or missing; returns the
 * files rewritten. `domains` limits the pass to the domains an import wrote (a session belongs to one domain, so no
 * other domain's flags can change). Default: every domain. `sessionsOf` (fragment files, relative to the sessions
 * folder) limits it further to the sessions with a fragment in those files: the files a writer added to a snapshot
 * whose marks were exact, since only those sessions gained fragments.
 */
export async function markWholeFragments(
  paths: LocalPaths,
  options: { domains?: string[]; sessionsOf?: string[] } = {},
): Promise<number> {
  const sessionsDir = paths.derivedDirs.sessions;
  const domainDirs = (options.domains ?? domainsUnder(sessionsDir))
    .map((d) => join(sessionsDir, `domain=${d}`))
    .filter((dir) => parquetFilesUnder(dir).length > 0);
  if (domainDirs.length === 0 || options.sessionsOf?.length === 0) return 0;
  const scratch = await openScratchDuckDb();
  const { connection } = scratch;
  const staging = join(paths.stagingDir, stagingName('whole'));
  try {
    const scan = (globs: string[]) =>
      `read_parquet([${globs.map(pathLiteral).join(', ')}], ${HIVE_PARTITIONS}, union_by_name = true, filename = true)`;
    const stored = scan(domainDirs.map((dir) => join(dir, '*', '*.parquet')));
    // union_by_name: files written before `whole` existed read NULL there, and get rewritten with it.
    const described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${stored}`)).getRowObjectsJS();
    const whole = described.some((c) => c.column_name === 'whole') ? 'whole' : 'CAST(NULL AS BOOLEAN)';
    // Sessions are counted by a 64-bit hash of (domain, session_id), which keeps the pass's memory to a few dozen
    // bytes per session. Two sessions sharing a hash only look like one session of several fragments, so neither is
    // marked (merged, still exact); a fragment marked whole is always its session's only one.
    const session = 'hash(domain, session_id)';
    const among = options.sessionsOf
      ? ` WHERE ${session} IN (SELECT ${session} FROM ${scan(options.sessionsOf.map((f) => join(sessionsDir, f)))})`
      : '';
    // A session's flags are wrong when one is unset, when its only fragment is not marked, or when it has several
    // and one is. Only those sessions are kept, with their fragment count: the others' flags stand as they are.
    await connection.run(
      `CREATE TABLE wrong AS SELECT h, n FROM (
         SELECT ${session} AS h, count(*)::INTEGER AS n, count(*) FILTER (WHERE ${whole})::INTEGER AS marked,
           count(*) FILTER (WHERE ${whole} IS NULL)::INTEGER AS unset FROM ${stored}${among} GROUP BY 1)
       WHERE unset > 0 OR (n = 1 AND marked = 0) OR (n > 1 AND marked > 0)`,
    );
    const wrong = (
      await connection.runAndReadAll(
        `SELECT DISTINCT filename AS file FROM ${stored} WHERE ${session} IN (SELECT h FROM wrong) ORDER BY 1`,
      )
    ).getRowObjectsJS() as { file: string }[];
    for (const [i, { file }] of wrong.entries()) {
      const staged = join(staging, `${i}.parquet`);
      await mkdir(dirname(staged), { recursive: true });
      // A file without the column has every session among the wrong ones (all unset).
      const columns = (
        await connection.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${pathLiteral(file)})`)
      ).getRowObjectsJS();
      const current = columns.some((c) => c.column_name === 'whole') ? 'f.whole' : 'CAST(NULL AS BOOLEAN)';
      await copyMarked(
        connection,
        file,
        staged,
        `coalesce((SELECT w.n FROM wrong w WHERE w.h = hash(f.domain, f.session_id)) = 1, ${current})`,
        localCodecs(),
      );
      await rename(staged, file);
    }
    return wrong.length;
  } finally {
    scratch.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Copies the fragment file `source` (under a `domain=/dt=` folder) to `target` with `whole` set by `isWhole`, a
 * condition on its columns (the file read as `f`, its folders as `f.domain` and `f.dt`). Our own SQL: no caller
 * passes a user's value in it.
 */
async function copyMarked(
  connection: DuckDBConnection,
  source: string,
  target: string,
  isWhole: string,
  codecs: StoreCodecs,
): Promise<void> {
  await connection.run(
    `COPY (SELECT ${flagged.map((c) => `f.${c}`).join(', ')}, ${isWhole} AS whole
       FROM read_parquet(${pathLiteral(source)}, ${HIVE_PARTITIONS}) f ORDER BY ${fragmentFileOrder})
     TO ${pathLiteral(target)} ${relationCopyOptions(codecs, 'sessions')}`,
  );
}
