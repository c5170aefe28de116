import { DuckDBInstance } from '@duckdb/node-api';

// Reads written Parquet back with a DuckDB of the test's own, independent of the importer and the engine.
// Values come back as JSON (BIGINT and TIMESTAMP as their text), so expectations stay plain literals.

export async function queryParquet(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  try {
    const connection = await instance.connect();
    const rows = (await connection.runAndReadAll(sql)).getRowObjectsJson();
    connection.closeSync();
    return rows as Record<string, unknown>[];
  } finally {
    instance.closeSync();
  }
}

/** A SQL string literal for a path in a test query. */
export function sqlPath(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}
