import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { duckDbMemory } from '../shared/engines/duckdb-engine.js';

// An in-memory DuckDB for a writer's work on Parquet files (import, backfill, compaction, keys, whole marks):
// DUCKDB_THREADS threads (default 2, this machine's cores) and the local memory limit (DUCKDB_MEMORY_LIMIT), closed
// by its owner when done.

export interface ScratchDuckDb {
  connection: DuckDBConnection;
  /** Another connection to the same database (its tables, not its temporary ones), closed with it. */
  connect(): Promise<DuckDBConnection>;
  close(): void;
}

export async function openScratchDuckDb(): Promise<ScratchDuckDb> {
  const instance = await DuckDBInstance.create(':memory:', {
    threads: String(process.env.DUCKDB_THREADS ?? 2),
    ...duckDbMemory(process.env, 'scratch'),
  });
  try {
    const connection = await instance.connect();
    const others: DuckDBConnection[] = [];
    return {
      connection,
      connect: async () => {
        const other = await instance.connect();
        others.push(other);
        return other;
      },
      close: () => {
        for (const other of others) other.closeSync();
        connection.closeSync();
        instance.closeSync();
      },
    };
  } catch (error) {
    instance.closeSync();
    throw error;
  }
}
