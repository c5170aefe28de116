import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { openScratchDuckDb } from './scratch-duckdb.js';
import { pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { domainsUnder, parquetFilesUnder, type LocalPaths } from './paths.js';
import { localCodecs, parquetCopyOptions } from './parquet-codec.js';

// Gives every row of the keyed relations (the pageview and page buckets) of a local store its visitor's integer
// key (docs/STORAGE.md): one key per (domain, visitor_id), never reused, so `count(DISTINCT visitor_key)` equals
// `count(DISTINCT visitor_id)` and hashes integers instead of text. The store is its own dictionary: the keyed
// files hold every (visitor_id, visitor_key) pair given out, and a new visitor gets the domain's largest key plus
// one. Buckets are written without keys; this pass keys the files that have none (an import's staged files
// before they are published, files of older versions or of the backfill) and must run under the store lock, so
// two writers never hand the same key to two visitors.

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
export async function keyVisitors(paths: LocalPaths, options: { pending?: Partial<Record<DerivedFolder, string>>; domains?: string[] } = {}): Promise<number> {
  const pending = options.pending ?? {};
  const roots = keyed.flatMap((r) => [{ relation: r, dir: paths.derivedDirs[r.folder], stored: true }, ...(pending[r.folder] ? [{ relation: r, dir: pending[r.folder]!, stored: false }] : [])]);
  const domains = options.domains ?? [...new Set(roots.flatMap(({ dir }) => domainsUnder(dir)))];
  if (domains.length === 0) return 0;
  const scratch = await openScratchDuckDb();
  const { connection } = scratch;
  try {
    let rewritten = 0;
    for (const domain of domains) {
      const filesOf = (stored: boolean) =>
        roots.filter((r) => r.stored === stored).flatMap(({ relation, dir }) => parquetFilesUnder(join(dir, `domain=${domain}`)).map((name) => ({ path: join(dir, `domain=${domain}`, name), folder: relation.folder, columns: relation.columns })));
      rewritten += await keyDomain(connection, filesOf(true), filesOf(false));
    }
    return rewritten;
  } finally {
    scratch.close();
  }
}

async function keyDomain(connection: DuckDBConnection, stored: BucketFile[], pending: BucketFile[]): Promise<number> {
  const rows = async (sql: string) => (await connection.runAndReadAll(sql)).getRowObjectsJS();
  const list = (files: BucketFile[]) => `[${files.map((f) => pathLiteral(f.path)).join(', ')}]`;
  const scan = (files: BucketFile[]) => `read_parquet(${list(files)}, union_by_name = true, filename = true)`;
  // Files written before keys existed lack the column (even when empty: every file must have it for the view);
  // union_by_name reads NULL there, so they are keyed like files written without keys.
  const old = new Set(stored.length
    ? (await rows(`SELECT file_name FROM parquet_schema(${list(stored)}) GROUP BY 1 HAVING count(*) FILTER (WHERE name = 'visitor_key') = 0`)).map((r) => r.file_name as string)
    : []);
  const keyedFiles = stored.filter((f) => !old.has(f.path));
  const unkeyed = new Set(keyedFiles.length ? (await rows(`SELECT DISTINCT filename FROM ${scan(keyedFiles)} WHERE visitor_key IS NULL`)).map((r) => r.filename as string) : []);
  const toKey = [...stored.filter((f) => old.has(f.path) || unkeyed.has(f.path)), ...pending];
  if (toKey.length === 0) return 0;

  await connection.run(`CREATE OR REPLACE TABLE needed AS SELECT DISTINCT visitor_id FROM ${scan(toKey)}`);
  // The keys already given to these visitors, then the next free ones for the rest, in visitor_id order.
  await connection.run(keyedFiles.length
    ? `CREATE OR REPLACE TABLE keys AS SELECT visitor_id, min(visitor_key) AS visitor_key FROM ${scan(keyedFiles)}
        WHERE visitor_key IS NOT NULL AND visitor_id IN (SELECT visitor_id FROM needed) GROUP BY visitor_id`
    : `CREATE OR REPLACE TABLE keys (visitor_id VARCHAR, visitor_key BIGINT)`);
  const largest = keyedFiles.length ? Number((await rows(`SELECT coalesce(max(visitor_key), 0) AS largest FROM ${scan(keyedFiles)}`))[0]?.largest) : 0;
  await connection.run(`INSERT INTO keys SELECT visitor_id, ${largest} + row_number() OVER (ORDER BY visitor_id)
    FROM needed WHERE visitor_id NOT IN (SELECT visitor_id FROM keys)`);

  const codecs = localCodecs();
  for (const { path, folder, columns } of toKey) {
    const select = columns.map(([name]) => (name === 'visitor_key' ? 'k.visitor_key' : `f.${name}`)).join(', ');
    // Staged beside the file and renamed over it: a reader sees the old file or the new one, never half of one.
    const staged = `${path}.keyed`;
    await connection.run(`COPY (SELECT ${select} FROM read_parquet(${pathLiteral(path)}, union_by_name = true) f JOIN keys k USING (visitor_id) ORDER BY f.visitor_id, f.bucket)
      TO ${pathLiteral(staged)} ${parquetCopyOptions(codecs[folder])}`);
    await rename(staged, path).catch(async (error: unknown) => {
      await rm(staged, { force: true });
      throw error;
    });
  }
  return toKey.length;
}
