import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

// An in-memory DuckDB for a writer's work on Parquet files (import, backfill, compaction, keys, whole marks):
// DUCKDB_THREADS threads (default 2, this machine's cores) and at most SCRATCH_MEMORY_LIMIT of memory, closed by its
// owner when done.

const SCRATCH_MEMORY_LIMIT = '768MB';

export interface ScratchDuckDb {
  connection: DuckDBConnection;
  close(): void;
}

export async function openScratchDuckDb(): Promise<ScratchDuckDb> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(process.env.DUCKDB_THREADS ?? 2),
    // Sorts and joins past this spill to temporary files, so a writer's memory stays bounded whatever its input.
    memory_limit: SCRATCH_MEMORY_LIMIT,
    temp_directory: join(tmpdir(), `analytics-scratch-${process.pid}`),
  });
  try {
    const connection = await instance.connect();
    return {
      connection,
      close: () => {
        connection.closeSync();
        instance.closeSync();
      },
    };
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}
