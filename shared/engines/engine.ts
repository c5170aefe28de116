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
  /**
   * Whether a statement is billed once it starts (Athena bills each query, with a minimum): then a request starts
   * none before the rate and usage limits admit it. An engine that costs only local work may start meanwhile
   * (shared/http/handler.ts).
   */
  readonly billedPerStatement: boolean;
  run(query: SqlQuery): Promise<{ rows: SqlRow[]; stats: QueryStats }>;
  /**
   * Present where merging statements pays (Athena bills each statement, with a 10 MB minimum, and lists each
   * partition it reads once per statement): whether this engine takes `query` as one statement (its length).
   * Absent: statements run one by one (shared/query/sql/statement-batch.ts).
   */
  takesStatement?(query: SqlQuery): boolean;
  /**
   * A name for the data the engine reads now, where the engine can tell (the local store's current snapshot): part of
   * the data version that keys cached answers (shared/store/answer-cache-repo.ts). Undefined: the version comes from
   * the domain's file states alone (S3).
   */
  dataVersion?(): string | undefined;
}
