import { existsSync, readdirSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { pageviewBucketColumns } from '../shared/events/event-columns.js';
import type { LocalPaths } from './paths.js';

// Gives every pageview bucket row of a local store its visitor's integer key (docs/STORAGE.md): one key per
// (domain, visitor_id), never reused, so `count(DISTINCT visitor_key)` equals `count(DISTINCT visitor_id)` and
// hashes integers instead of text. The store is its own dictionary: the keyed buckets hold every (visitor_id,
// visitor_key) pair given out, and a new visitor gets the domain's largest key plus one. Buckets are written
// without keys; this pass keys the files that have none (an import's staged files before they are published,
// files of older versions or of the backfill) and must run under the store lock, so two writers never hand the
// same key to two visitors.

/**
 * Keys the bucket files without keys: every stored one of `domains` (default: every domain) and every one under
 * `pendingDir` (an import's staged buckets, same layout). Returns the files rewritten.
 */
export async function keyVisitors(paths: LocalPaths, options: { pendingDir?: string; domains?: string[] } = {}): Promise<number> {
  const storedDir = paths.derivedDirs.pageviews;
  const { pendingDir } = options;
  const domains = options.domains ?? [...new Set([...domainsUnder(storedDir), ...(pendingDir ? domainsUnder(pendingDir) : [])])];
  if (domains.length === 0) return 0;
  const instance = await DuckDBInstance.create(':memory:', { threads: String(process.env.DUCKDB_THREADS ?? 2) });
  const connection = await instance.connect();
  try {
    let rewritten = 0;
    for (const domain of domains) {
      const stored = parquetFiles(join(storedDir, `domain=${domain}`));
      const pending = pendingDir ? parquetFiles(join(pendingDir, `domain=${domain}`)) : [];
      rewritten += await keyDomain(connection, stored, pending);
    }
    return rewritten;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

async function keyDomain(connection: DuckDBConnection, stored: string[], pending: string[]): Promise<number> {
  const rows = async (sql: string) => (await connection.runAndReadAll(sql)).getRowObjectsJS();
  const scan = (files: string[]) => `read_parquet([${files.map(pathLiteral).join(', ')}], union_by_name = true, filename = true)`;
  // Files written before keys existed lack the column (even when empty: every file must have it for the view);
  // union_by_name reads NULL there, so they are keyed like files written without keys.
  const old = stored.length
    ? (await rows(`SELECT file_name FROM parquet_schema([${stored.map(pathLiteral).join(', ')}]) GROUP BY 1 HAVING count(*) FILTER (WHERE name = 'visitor_key') = 0`)).map((r) => r.file_name as string)
    : [];
  const keyed = stored.filter((file) => !old.includes(file));
  const hasKeys = keyed.length > 0;
  const unkeyed = hasKeys ? (await rows(`SELECT DISTINCT filename FROM ${scan(keyed)} WHERE visitor_key IS NULL`)).map((r) => r.filename as string) : [];
  const toKey = [...old, ...unkeyed, ...pending];
  if (toKey.length === 0) return 0;

  await connection.run(`CREATE OR REPLACE TABLE needed AS SELECT DISTINCT visitor_id FROM ${scan(toKey)}`);
  // The keys already given to these visitors, then the next free ones for the rest, in visitor_id order.
  await connection.run(hasKeys
    ? `CREATE OR REPLACE TABLE keys AS SELECT visitor_id, min(visitor_key) AS visitor_key FROM ${scan(keyed)}
        WHERE visitor_key IS NOT NULL AND visitor_id IN (SELECT visitor_id FROM needed) GROUP BY visitor_id`
    : `CREATE OR REPLACE TABLE keys (visitor_id VARCHAR, visitor_key BIGINT)`);
  const largest = hasKeys ? Number((await rows(`SELECT coalesce(max(visitor_key), 0) AS largest FROM ${scan(keyed)}`))[0]?.largest) : 0;
  await connection.run(`INSERT INTO keys SELECT visitor_id, ${largest} + row_number() OVER (ORDER BY visitor_id)
    FROM needed WHERE visitor_id NOT IN (SELECT visitor_id FROM keys)`);

  const columns = pageviewBucketColumns.map(([name]) => (name === 'visitor_key' ? 'k.visitor_key' : `f.${name}`)).join(', ');
  for (const file of toKey) {
    // Staged beside the file and renamed over it: a reader sees the old file or the new one, never half of one.
    const staged = `${file}.keyed`;
    await connection.run(`COPY (SELECT ${columns} FROM read_parquet(${pathLiteral(file)}, union_by_name = true) f JOIN keys k USING (visitor_id) ORDER BY f.visitor_id, f.bucket)
      TO ${pathLiteral(staged)} (FORMAT parquet, COMPRESSION zstd)`);
    await rename(staged, file).catch(async (error: unknown) => {
      await rm(staged, { force: true });
      throw error;
    });
  }
  return toKey.length;
}

function domainsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((d) => d.startsWith('domain=')).map((d) => d.slice('domain='.length));
}

function parquetFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((name) => name.endsWith('.parquet')).map((name) => join(dir, name));
}
