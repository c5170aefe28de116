import type { Dialect } from '../query/sql/dialect.js';

// The one interface both engines implement: run a printed query with its bound parameters, get plain rows.
// Values come back as string, number, boolean or null; the SQL formats dates and times itself.

export type SqlParam =
  | { type: 'string'; value: string }
  | { type: 'int'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'date'; value: string }
  | { type: 'timestamp'; value: Date };

export interface SqlQuery {
  sql: string;
  params: SqlParam[];
}

export type SqlValue = string | number | boolean | null;
export type SqlRow = Record<string, SqlValue>;

export interface QueryStats {
  /** Bytes the engine read from storage (Athena's billing figure); absent where the engine does not say. */
  bytesScanned?: number;
}

export interface QueryEngine {
  readonly dialect: Dialect;
  run(query: SqlQuery): Promise<{ rows: SqlRow[]; stats: QueryStats }>;
}
