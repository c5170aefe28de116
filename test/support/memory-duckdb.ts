import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll } from 'vitest';

/**
 * An in-memory DuckDB of the test file's own, opened before its tests and closed after: for tests that run SQL
 * the project prints on the engine itself, without a store. Call at the top level of a test file.
 */
export function memoryDuckDb(): () => DuckDBConnection {
  let instance: DuckDBInstance | undefined;
  let connection: DuckDBConnection | undefined;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
    connection = await instance.connect();
  });
  afterAll(() => {
    connection?.closeSync();
    instance?.closeSync();
  });
  return () => connection!;
}
