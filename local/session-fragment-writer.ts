import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { duckdbDialect } from '../shared/query/dialects.js';
import { fragmentsOf } from '../shared/query/session-fragments.js';
import { print, trusted } from '../shared/query/sql.js';

// Writes the session fragments of a relation of event rows (a table of one import batch, or an event file read
// back by the backfill) to one ZSTD Parquet file. Every file of fragments comes from here.

/** `relation` is a table name or a `read_parquet(...)` call chosen by code, never request data. */
export async function writeSessionFragments(connection: DuckDBConnection, relation: string, file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const select = print(fragmentsOf(trusted(relation), duckdbDialect)).sql;
  await connection.run(`COPY (${select}) TO '${file.replaceAll("'", "''")}' (FORMAT parquet, COMPRESSION zstd)`);
}
