import type { SqlQuery } from '../query/sql/sql.js';
import type { SqlTarget } from '../query/sql/target.js';

// The one interface both engines implement: run a printed query with its bound parameters, get plain rows.
// Values come back as string, number, boolean or null; the SQL formats dates and times itself.

export type SqlValue = string | number | boolean | null;
export type SqlRow = Record<string, SqlValue>;

export interface QueryStats {
  /** Bytes the engine read from storage (Athena's billing figure); absent where the engine does not say. */
  bytesScanned?: number;
}

export interface QueryEngine {
  /** The SQL spelling and the store's relations this engine's queries are printed for. */
  readonly target: SqlTarget;
  run(query: SqlQuery): Promise<{ rows: SqlRow[]; stats: QueryStats }>;
}
