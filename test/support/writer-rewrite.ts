import { readFileSync } from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { DerivedFolder } from '../../shared/events/derived-relations.js';
import { writeEventFile, type EventFileStore } from '../../writer/event-file-layout.js';
import { relationCopyOptions, S3_CODECS } from '../../writer/parquet-codec.js';
import { sqlPath } from './parquet-rows.js';

// A store's file written again from its own rows by the writers' own COPY, in ZSTD at `level` (DuckDB's default
// where undefined): tests compare its bytes with the file's to tell the level a writer used. Event files are
// rewritten in the event-file order and row groups of `store`, the others in their rows' order and DuckDB's default
// row groups, as the writers write them.
export async function rewriteAsWriters(
  connection: DuckDBConnection,
  relation: 'events' | DerivedFolder,
  store: EventFileStore,
  file: string,
  target: string,
  level: number | undefined,
): Promise<Buffer> {
  if (relation === 'events') await writeEventFile(connection, [file], target, 'zstd', store, level);
  else
    await connection.run(
      `COPY (SELECT * FROM read_parquet(${sqlPath(file)}, hive_partitioning = false)) TO ${sqlPath(target)} ${relationCopyOptions({ ...S3_CODECS, zstdLevel: level }, relation)}`,
    );
  return readFileSync(target);
}
