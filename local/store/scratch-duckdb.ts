import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';

// An in-memory DuckDB for a writer's work on Parquet files (import, backfill, compaction, keys, whole marks):
// DUCKDB_THREADS threads (default 2, this machine's cores), closed by its owner when done.

export interface ScratchDuckDb {
  connection: DuckDBConnection;
  close(): void;
}

export async function openScratchDuckDb(): Promise<ScratchDuckDb> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(process.env.DUCKDB_THREADS ?? 2),
    // Where DuckDB spills what does not fit its memory (by default 80% of the machine's). No lower limit is set:
    // not every statement of an import can spill, and a 768 MB limit failed a 100M-event import (docs/STORAGE.md).
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
