import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { DuckDBConnection } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { download, isNoSuchKey, listing, type BucketAccess } from './s3-objects.js';

// Upkeep's index of a domain's session fragments (docs/STORAGE.md, "Upkeep on S3"): which fragment files hold
// which sessions, kept in the bucket between runs so that a run reads only the fragment files written since the
// index was last saved. A run's requests grow with the files that arrived, never with the domain's history; the
// index itself is one object per domain (8 bytes per session and fragment file, before compression).
//
// Rows: `file` (`dt=<day>/<name>` under the domain's sessions folder), `etag` (the file's, as listed), `h` (a 64-bit
// hash of the session id, MD5's lower half: stable across DuckDB versions, which `hash()` is not, and the index
// outlives them). Two sessions sharing `h` look like one session in two files, so neither is marked whole: a mark
// stays exact. The index is a cache of what the listing shows: a file listed under another ETag, or no longer
// listed, loses its rows; a listed file missing from it is read. A run that dies before saving leaves the previous
// index, which the next run corrects the same way.

export const FRAGMENT_INDEX_PREFIX = 'upkeep/';
const SESSIONS_FOLDER = 'sessions';
/** Fragment files downloaded at once. */
const DOWNLOADS_AT_ONCE = 8;

export interface IndexTarget extends BucketAccess {
  workDir: string;
}

/** The stable session hash the index holds, as SQL over a session id column or expression. */
export const sessionHash = (column: string): string => `md5_number_lower(${column})`;

export function fragmentIndexKey(domain: string): string {
  return `${FRAGMENT_INDEX_PREFIX}domain=${domain}/fragment-sessions.parquet`;
}

export interface IndexRefresh {
  /** Fragment files read because the index did not hold them. */
  read: number;
  /** Files whose rows were dropped (deleted, or rewritten under another ETag). */
  dropped: number;
}

/**
 * Leaves in `fragment_sessions (file, etag, h)` of `connection` every fragment file of the domain as now listed,
 * from the saved index plus the files it lacks; saves the index when it changed.
 */
export async function refreshFragmentIndex(
  target: IndexTarget,
  domain: string,
  connection: DuckDBConnection,
): Promise<IndexRefresh> {
  const dir = join(target.workDir, `fragment-index-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  try {
    await connection.run('CREATE OR REPLACE TABLE fragment_sessions (file VARCHAR, etag VARCHAR, h UBIGINT)');
    const saved = join(dir, 'saved.parquet');
    if (await downloadIfAny(target, fragmentIndexKey(domain), saved)) {
      await connection.run(
        `INSERT INTO fragment_sessions SELECT file, etag, h FROM read_parquet(${pathLiteral(saved)})`,
      );
    }
    await connection.run('CREATE OR REPLACE TEMP TABLE listed_fragments (file VARCHAR, etag VARCHAR)');
    const appender = await connection.createAppender('listed_fragments');
    for await (const page of listing(target, `${SESSIONS_FOLDER}/domain=${domain}/`)) {
      for (const object of page.Contents ?? []) {
        const file = /\/(dt=\d{4}-\d{2}-\d{2}\/[^/]+\.parquet)$/.exec(object.Key ?? '')?.[1];
        if (!file) continue;
        appender.appendVarchar(file);
        appender.appendVarchar(object.ETag ?? '');
        appender.endRow();
      }
    }
    appender.closeSync();
    const dropped = Number(
      (
        await connection.runAndReadAll(
          'SELECT count(DISTINCT (file, etag)) FROM fragment_sessions WHERE (file, etag) NOT IN (SELECT (file, etag) FROM listed_fragments)',
        )
      ).getRows()[0]![0],
    );
    if (dropped > 0)
      await connection.run(
        'DELETE FROM fragment_sessions WHERE (file, etag) NOT IN (SELECT (file, etag) FROM listed_fragments)',
      );
    const missing = (
      await connection.runAndReadAll(
        'SELECT file, etag FROM listed_fragments WHERE (file, etag) NOT IN (SELECT DISTINCT (file, etag) FROM fragment_sessions) ORDER BY file',
      )
    ).getRows() as [string, string][];
    for (let i = 0; i < missing.length; i += DOWNLOADS_AT_ONCE) {
      const batch = missing.slice(i, i + DOWNLOADS_AT_ONCE);
      const locals = await Promise.all(
        batch.map(async ([file, etag], j) => {
          const local = join(dir, `${i + j}.parquet`);
          return (await downloadIfAny(target, `${SESSIONS_FOLDER}/domain=${domain}/${file}`, local))
            ? ([file, etag, local] as const)
            : undefined;
        }),
      );
      for (const entry of locals) {
        // Deleted since it was listed: its rows would only keep marks off; leaving it out is as exact.
        if (!entry) continue;
        const [file, etag, local] = entry;
        await connection.run(
          `INSERT INTO fragment_sessions SELECT DISTINCT $file, $etag, ${sessionHash('session_id')} FROM read_parquet(${pathLiteral(local)})`,
          { file, etag },
        );
        await rm(local);
      }
    }
    if (dropped > 0 || missing.length > 0) {
      const fresh = join(dir, 'fresh.parquet');
      await connection.run(
        `COPY (SELECT file, etag, h FROM fragment_sessions ORDER BY file, h) TO ${pathLiteral(fresh)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      await target.client.send(
        new PutObjectCommand({ Bucket: target.bucket, Key: fragmentIndexKey(domain), Body: await readFile(fresh) }),
      );
    }
    return { read: missing.length, dropped };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Leaves in `table (session_id)` the sessions of the event files `sources` (local paths) that have a fragment in
 * a file of the index other than `files` (`dt=<day>/<name>`, the files being compacted): their fragments are not
 * whole.
 */
export async function splitSessionsOf(
  connection: DuckDBConnection,
  table: string,
  sources: string[],
  files: string[],
): Promise<void> {
  await connection.run('CREATE OR REPLACE TEMP TABLE compacting (file VARCHAR)');
  const appender = await connection.createAppender('compacting');
  for (const file of files) {
    appender.appendVarchar(file);
    appender.endRow();
  }
  appender.closeSync();
  await connection.run(
    `CREATE OR REPLACE TEMP TABLE ${table} AS
       SELECT DISTINCT session_id FROM read_parquet([${sources.map(pathLiteral).join(', ')}])
       WHERE ${sessionHash('session_id')} IN (SELECT h FROM fragment_sessions WHERE file NOT IN (SELECT file FROM compacting))`,
  );
}

/** Streams `key` to `local`; false when there is no such object. */
async function downloadIfAny(target: IndexTarget, key: string, local: string): Promise<boolean> {
  try {
    await download(target, key, local);
    return true;
  } catch (error) {
    if (isNoSuchKey(error)) return false;
    throw error;
  }
}
