import type { DuckDBConnection } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { parquetCopyOptions, type ParquetCodec } from './parquet-codec.js';

// The order of the rows in an event file and the size of its row groups, the same for every writer (the importer,
// compaction, S3's upkeep). Rows are grouped by `type` and event name first: readers skip what a filter excludes by
// the row groups' min/max statistics (DuckDB locally; Athena and Trino on S3, where a skipped row group is also a
// byte not billed), so a read of custom events or revenue leaves the pageviews' row groups alone. Within those, a
// session's rows lie together in time order: its session and visitor ids repeat in runs, which compress better than
// the same rows in time order. Answers never depend on the order, only the bytes read do.

export const eventFileOrder = 'type, event_name, session_id, ts';

/** The store an event file is written for: its readers differ in what a row group costs them. */
export type EventFileStore = 'local' | 's3';

/**
 * Rows per row group. Locally DuckDB's default (stated so the layout does not move with it): smaller groups made
 * each file slower to write for little gain in DuckDB's reads. On S3 smaller groups: Athena bills the row groups it
 * reads, and a day of a mid-size site is then several groups, of which a custom-event read skips most.
 */
export const eventRowGroupRows: Record<EventFileStore, number> = { local: 122_880, s3: 16_384 };

/** The options of a DuckDB `COPY ... TO` writing an event file for `store` with `codec` (ZSTD at `zstdLevel`). */
export function eventFileCopyOptions(codec: ParquetCodec, store: EventFileStore, zstdLevel?: number): string {
  return parquetCopyOptions(codec, eventRowGroupRows[store], zstdLevel);
}

/** Writes the rows of the event files `sources` as one event file `target` for `store`, in `codec` (at `zstdLevel`). */
export async function writeEventFile(
  connection: DuckDBConnection,
  sources: string[],
  target: string,
  codec: ParquetCodec,
  store: EventFileStore,
  zstdLevel?: number,
): Promise<void> {
  const files = `[${sources.map(pathLiteral).join(', ')}]`;
  await connection.run(
    `COPY (SELECT * FROM read_parquet(${files}, hive_partitioning = false) ORDER BY ${eventFileOrder}) TO ${pathLiteral(target)} ${eventFileCopyOptions(codec, store, zstdLevel)}`,
  );
}
