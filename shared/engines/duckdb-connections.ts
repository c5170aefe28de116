import type { DuckDBConnection, DuckDBInstance, DuckDBPreparedStatement } from '@duckdb/node-api';

// The connections of one DuckDB instance kept between queries, each with the statements it has prepared, by SQL
// text. DuckDB plans a statement when it is prepared (without its values) and again when it runs with its values;
// a statement prepared before is only planned with its values, which spares the first plan: a dashboard's statements
// repeat their text while only their values change. A prepared statement keeps reading the
// views as they were when it was prepared, so `reset` (called whenever the views are redefined) retires every
// connection and statement made before it.

/** Idle connections kept; more run at once when queries overlap, and the extra ones are closed after use. */
const MAX_IDLE_CONNECTIONS = 8;
/** Statements kept per connection, the least recently used dropped first. */
const MAX_STATEMENTS_PER_CONNECTION = 64;

export class PooledConnection {
  private readonly statements = new Map<string, DuckDBPreparedStatement>();

  constructor(
    readonly connection: DuckDBConnection,
    /** The views' generation this connection's statements were prepared against. */
    readonly generation: number,
  ) {}

  /** The statement for `sql`, prepared on this connection once; its bindings are cleared for the caller. */
  async prepare(sql: string): Promise<DuckDBPreparedStatement> {
    const known = this.statements.get(sql);
    if (known) {
      this.statements.delete(sql);
      this.statements.set(sql, known);
      known.clearBindings();
      return known;
    }
    const statement = await this.connection.prepare(sql);
    this.statements.set(sql, statement);
    if (this.statements.size > MAX_STATEMENTS_PER_CONNECTION) {
      const [oldestSql, oldest] = this.statements.entries().next().value!;
      this.statements.delete(oldestSql);
      oldest.destroySync();
    }
    return statement;
  }

  close(): void {
    for (const statement of this.statements.values()) statement.destroySync();
    this.statements.clear();
    this.connection.closeSync();
  }
}

export class ConnectionPool {
  private idle: PooledConnection[] = [];
  private generation = 0;

  constructor(private readonly instance: DuckDBInstance) {}

  /** An idle connection of the current generation, or a new one. */
  async take(): Promise<PooledConnection> {
    for (let pooled = this.idle.pop(); pooled; pooled = this.idle.pop()) {
      if (pooled.generation === this.generation) return pooled;
      pooled.close();
    }
    return new PooledConnection(await this.instance.connect(), this.generation);
  }

  /**
   * Returns a connection after its query. One whose query failed or was interrupted is closed rather than kept, as
   * is one of an earlier generation or beyond the idle limit.
   */
  give(pooled: PooledConnection, healthy: boolean): void {
    if (healthy && pooled.generation === this.generation && this.idle.length < MAX_IDLE_CONNECTIONS)
      this.idle.push(pooled);
    else pooled.close();
  }

  /** Retires every connection and statement made so far: idle ones now, those in use when they are given back. */
  reset(): void {
    this.generation += 1;
    for (const pooled of this.idle) pooled.close();
    this.idle = [];
  }

  close(): void {
    this.reset();
  }
}
