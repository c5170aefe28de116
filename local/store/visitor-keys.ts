import { statSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';
import { pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { domainsUnder, type LocalPaths } from './paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { localCodecs, relationCopyOptions } from '../../writer/parquet-codec.js';
import { derivedFileOrder } from '../../writer/derived-writer.js';

// Gives every row of the keyed relations (the pageview, page and custom-event buckets, the visitor days) of a local
// store its visitor's integer key (docs/STORAGE.md): one key per (domain, visitor_id), never reused, so
// `count(DISTINCT visitor_key)` equals `count(DISTINCT visitor_id)` and hashes integers instead of text. The store is
// its own dictionary: the keyed files hold every (visitor_id, visitor_key) pair given out, and a new visitor gets the
// domain's largest key plus one. Files written without keys are keyed here (an import's staged files before they are
// published, files of older versions or of the backfill); the pass must run under the store lock, so two writers
// never hand the same key to two visitors.

const keyed = derivedRelations.filter((r) => r.columns.some(([name]) => name === 'visitor_key'));

interface BucketFile {
  path: string;
  folder: DerivedFolder;
  /** The relation's stored columns, in file order. */
  columns: readonly (readonly [string, string])[];
}

/**
 * Keys the files without keys: every stored one of `domains` (default: every domain) and every one under the
 * `pending` folders (an import's staged files, same layout). Returns the files rewritten.
 */
export async function keyVisitors(
  paths: LocalPaths,
  options: { pending?: Partial<Record<DerivedFolder, string>>; domains?: string[]; rowsPerSlice?: number } = {},
): Promise<number> {
  const pending = options.pending ?? {};
  const roots = keyed.flatMap((r) => [
    { relation: r, dir: paths.derivedDirs[r.folder], stored: true },
    ...(pending[r.folder] ? [{ relation: r, dir: pending[r.folder]!, stored: false }] : []),
  ]);
  const domains = options.domains ?? [...new Set(roots.flatMap(({ dir }) => domainsUnder(dir)))];
  if (domains.length === 0) return 0;
  const scratch = await openScratchDuckDb();
  const { connection } = scratch;
  try {
    let rewritten = 0;
    for (const domain of domains) {
      const filesOf = (stored: boolean) =>
        roots
          .filter((r) => r.stored === stored)
          .flatMap(({ relation, dir }) =>
            parquetFilesUnder(join(dir, `domain=${domain}`)).map((name) => ({
              path: join(dir, `domain=${domain}`, name),
              folder: relation.folder,
              columns: relation.columns,
            })),
          );
      rewritten += await keyDomain(connection, filesOf(true), filesOf(false), options.rowsPerSlice ?? ROWS_PER_SLICE);
    }
    return rewritten;
  } finally {
    scratch.close();
  }
}

async function keyDomain(
  connection: DuckDBConnection,
  stored: BucketFile[],
  pending: BucketFile[],
  rowsPerSlice: number,
): Promise<number> {
  const rows = async (sql: string) => (await connection.runAndReadAll(sql)).getRowObjectsJS();
  const list = (files: BucketFile[]) => `[${files.map((f) => pathLiteral(f.path)).join(', ')}]`;
  const scan = (files: BucketFile[]) => `read_parquet(${list(files)}, union_by_name = true, filename = true)`;
  // Files written before keys existed lack the column (even when empty: every file must have it for the view);
  // union_by_name reads NULL there, so they are keyed like files written without keys.
  const old = new Set(
    stored.length
      ? (
          await rows(
            `SELECT file_name FROM parquet_schema(${list(stored)}) GROUP BY 1 HAVING count(*) FILTER (WHERE name = 'visitor_key') = 0`,
          )
        ).map((r) => r.file_name as string)
      : [],
  );
  const keyedFiles = stored.filter((f) => !old.has(f.path));
  const unkeyed = new Set(
    keyedFiles.length
      ? (await rows(`SELECT DISTINCT filename FROM ${scan(keyedFiles)} WHERE visitor_key IS NULL`)).map(
          (r) => r.filename as string,
        )
      : [],
  );
  const toKey = [...stored.filter((f) => old.has(f.path) || unkeyed.has(f.path)), ...pending];
  if (toKey.length === 0) return 0;

  const rowsToKey = Number(
    (await rows(`SELECT coalesce(sum(num_rows), 0) AS n FROM parquet_file_metadata(${list(toKey)})`))[0]?.n ?? 0,
  );
  await giveKeys(
    connection,
    keyedFiles.map((f) => f.path),
    { visitors: `SELECT visitor_id FROM ${scan(toKey)}`, rows: rowsToKey, rowsPerSlice },
    'keys',
  );

  const codecs = localCodecs();
  for (const { path, folder, columns } of toKey) {
    const select = columns.map(([name]) => (name === 'visitor_key' ? 'k.visitor_key' : `f.${name}`)).join(', ');
    // Staged beside the file and renamed over it: a reader sees the old file or the new one, never half of one.
    const staged = `${path}.keyed`;
    await connection.run(`COPY (SELECT ${select} FROM read_parquet(${pathLiteral(path)}, union_by_name = true) f JOIN keys k USING (visitor_id) ORDER BY ${derivedFileOrder[folder]})
      TO ${pathLiteral(staged)} ${relationCopyOptions(codecs, folder)}`);
    await rename(staged, path).catch(async (error: unknown) => {
      await rm(staged, { force: true });
      throw error;
    });
  }
  return toKey.length;
}

/**
 * Rows of the files to key per slice of their visitors. The lookup groups a slice's visitors' rows of every keyed
 * file by id, so its memory follows the slice, not the domain: a large domain's visitors in one piece exceed the
 * memory limit (docs/STORAGE.md).
 */
const ROWS_PER_SLICE = 4_000_000;

/** The visitors to key: `visitors` selects their ids (repeats allowed) from `rows` rows; sliced per `rowsPerSlice`. */
interface NeededVisitors {
  visitors: string;
  rows: number;
  rowsPerSlice?: number;
}

/**
 * Fills table `table` (visitor_id, visitor_key) with a key for every visitor `needed` names: the one the keyed files
 * `keyedFiles` already give it, else the next free one after their largest. Visitors are taken in slices by a hash
 * of the id, each looked up in one statement; new keys follow the id order within a slice. Table names are chosen
 * by code.
 */
async function giveKeys(
  connection: DuckDBConnection,
  keyedFiles: string[],
  needed: NeededVisitors,
  table: string,
): Promise<void> {
  const scan = `read_parquet([${keyedFiles.map(pathLiteral).join(', ')}], union_by_name = true)`;
  let largest = keyedFiles.length
    ? Number(
        (
          await connection.runAndReadAll(`SELECT coalesce(max(visitor_key), 0) AS largest FROM ${scan}`)
        ).getRowObjectsJS()[0]?.largest,
      )
    : 0;
  await connection.run(`CREATE OR REPLACE TABLE ${table} (visitor_id VARCHAR, visitor_key BIGINT)`);
  const slices = Math.max(1, Math.ceil(needed.rows / (needed.rowsPerSlice ?? ROWS_PER_SLICE)));
  for (let slice = 0; slice < slices; slice++) {
    const inSlice = slices === 1 ? 'true' : `hash(visitor_id) % ${slices} = ${slice}`;
    await connection.run(
      `CREATE OR REPLACE TEMP TABLE slice_needed AS SELECT DISTINCT visitor_id FROM (${needed.visitors}) WHERE ${inSlice}`,
    );
    await connection.run(
      keyedFiles.length
        ? `CREATE OR REPLACE TEMP TABLE slice_found AS SELECT visitor_id, min(visitor_key) AS visitor_key FROM ${scan}
          WHERE visitor_key IS NOT NULL AND ${inSlice} AND visitor_id IN (SELECT visitor_id FROM slice_needed) GROUP BY visitor_id`
        : 'CREATE OR REPLACE TEMP TABLE slice_found (visitor_id VARCHAR, visitor_key BIGINT)',
    );
    await connection.run(`INSERT INTO ${table} SELECT visitor_id, visitor_key FROM slice_found`);
    await connection.run(`CREATE OR REPLACE TEMP TABLE slice_new AS SELECT visitor_id, ${largest} + row_number() OVER (ORDER BY visitor_id) AS visitor_key
      FROM slice_needed WHERE visitor_id NOT IN (SELECT visitor_id FROM slice_found)`);
    await connection.run(`INSERT INTO ${table} SELECT visitor_id, visitor_key FROM slice_new`);
    largest += Number((await connection.runAndReadAll('SELECT count(*) AS n FROM slice_new')).getRowObjectsJS()[0]?.n);
  }
  await connection.run(
    'DROP TABLE IF EXISTS slice_needed; DROP TABLE IF EXISTS slice_found; DROP TABLE IF EXISTS slice_new',
  );
}

/**
 * An import's keys, given before it takes the store lock (writer/importer.ts), so its buckets are written keyed once;
 * `paths` is a snapshot's (null: the store has none yet).
 * They hold only if no other writer changed the domain's keyed files meanwhile: `fingerprint` names those files
 * (path, inode, size, time), and the importer compares it with the snapshot it publishes (`areKeysCurrent`); a rename
 * over a file gives it a new inode, and snapshots share files by hard links. When they no longer hold, the importer
 * keys its staged files again under the lock, as any writer does.
 */
export async function keysBeforeLock(
  connection: DuckDBConnection,
  paths: LocalPaths | null,
  domain: string,
  needed: string,
  table: string,
): Promise<{ fingerprint: string }> {
  const files = paths ? keyedFilesOf(paths, domain) : [];
  const withKeys = files.length
    ? new Set(
        (
          await connection.runAndReadAll(
            `SELECT file_name FROM parquet_schema([${files.map(pathLiteral).join(', ')}]) WHERE name = 'visitor_key' GROUP BY 1`,
          )
        )
          .getRowObjectsJS()
          .map((r) => r.file_name as string),
      )
    : new Set<string>();
  const rows = Number((await connection.runAndReadAll(`SELECT count(*) AS n FROM ${needed}`)).getRowObjectsJS()[0]?.n);
  await giveKeys(
    connection,
    files.filter((f) => withKeys.has(f)),
    { visitors: `SELECT visitor_id FROM ${needed}`, rows },
    table,
  );
  return { fingerprint: fingerprintOf(files) };
}

/** Whether keys given by keysBeforeLock from `fingerprint` still hold in the snapshot at `paths`. */
export function areKeysCurrent(paths: LocalPaths, domain: string, fingerprint: string): boolean {
  return fingerprintOf(keyedFilesOf(paths, domain)) === fingerprint;
}

function keyedFilesOf(paths: LocalPaths, domain: string): string[] {
  return keyed.flatMap((r) => {
    const dir = join(paths.derivedDirs[r.folder], `domain=${domain}`);
    return parquetFilesUnder(dir).map((name) => join(dir, name));
  });
}

/** The files by their place under the snapshot (relation folder onward), inode, size and time. */
function fingerprintOf(files: string[]): string {
  return files
    .map((file) => {
      const { ino, size, mtimeMs } = statSync(file);
      return `${file.split(sep).slice(-4).join('/')}:${ino}:${size}:${mtimeMs}`;
    })
    .sort()
    .join('\n');
}
