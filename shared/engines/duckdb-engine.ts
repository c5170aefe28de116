import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { DuckDBDateValue, DuckDBInstance, DuckDBTimestampValue, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { localTarget } from '../query/sql/target.js';
import {
  derivedRelations,
  fragmentTwinRelations,
  SESSION_FRAGMENTS_TABLE,
  type FragmentTwinFolder,
} from '../events/derived-relations.js';
import { sessionCountsOf } from '../query/derived/session-counts.js';
import { unmarkedFragmentsOf } from '../query/derived/session-fragments.js';
import { print, trusted, type Sql } from '../query/sql/sql.js';
import { duckdbTypes, eventColumns, partitionColumns, type ColumnType } from '../events/event-columns.js';
import type { QueryEngine, SqlRow, SqlValue } from './engine.js';
import { EngineTimeoutError } from './engine-errors.js';
import { ConnectionPool } from './duckdb-connections.js';
import { requestDeadline } from '../log.js';
import type { SqlParam, SqlQuery } from '../query/sql/sql.js';

// Local engine: one in-process DuckDB per process over the Parquet layout (docs/EVENT-FORMAT.md), its connections
// and prepared statements kept between queries (duckdb-connections.ts). Never imported by a Lambda entry point. The derived relations (derivedRelations, docs/STORAGE.md)
// sit in their folders next to the events folder, in the same `domain=/dt=` layout, each read through a view named
// like its Glue table. The folders' parent may be a link to the store's current snapshot (local/store/): each
// query resolves it first and reads that snapshot only, so a store published meanwhile is never half read.

export class DuckDbEngine implements QueryEngine {
  readonly target = localTarget;
  readonly billedPerStatement = false;
  private readonly views: {
    name: string;
    folder: string;
    columns: ColumnList;
    overFiles: boolean;
    computed?: string;
    definition?: string;
  }[];
  /** The folder holding the events folder and the derived folders, as given (a link) and as last resolved. */
  private readonly root: string;
  private resolvedRoot: string | undefined;

  /** The view definition under way: concurrent queries wait for one instead of racing to replace the views. */
  private defining: Promise<void> | undefined;
  /** Connections kept between queries with the statements they prepared (duckdb-connections.ts). */
  private readonly connections: ConnectionPool;

  private constructor(
    private readonly instance: DuckDBInstance,
    eventsDir: string,
  ) {
    this.connections = new ConnectionPool(instance);
    this.root = dirname(eventsDir);
    this.views = [
      {
        name: 'events',
        folder: basename(eventsDir),
        columns: [...eventColumns, ...partitionColumns],
        overFiles: false,
      },
      ...derivedRelations.map((r) => ({
        name: r.table,
        folder: r.folder,
        columns: [...r.columns, ...partitionColumns],
        overFiles: false,
      })),
      // After the fragments' view, which they are computed from in a snapshot written before they existed.
      ...fragmentTwinRelations.map((r) => ({
        name: r.table,
        folder: r.folder,
        columns: [...r.columns, ...partitionColumns],
        overFiles: false,
        computed: print(computedTwins[r.folder]).sql,
      })),
    ];
  }

  /** The derived relations are read from their folders beside `eventsDir` (local/store/paths.ts). */
  static async open(eventsDir: string): Promise<DuckDbEngine> {
    const instance = await DuckDBInstance.create(':memory:', {
      threads: String(process.env.DUCKDB_THREADS ?? 2),
      ...duckDbMemory(process.env),
    });
    const engine = new DuckDbEngine(instance, eventsDir);
    // The Parquet footers of unchanged files are parsed once, not on every query. DuckDB re-reads a file whose
    // modification time changed and trusts its cache only for files older than 10 seconds, so rewritten files
    // (keys, whole marks) are never read with a stale footer. The bytes read are kept in DuckDB's own buffer pool
    // (its external file cache, validated by modification time like the footers; evicted first when memory runs
    // short), not left to the OS page cache, which an idle machine reclaims within a minute (docs/BENCHMARKS.md,
    // "Page cache"). The cache applies to local Parquet only with prefetching on.
    await engine.runRaw(
      'LOAD parquet; SET GLOBAL parquet_metadata_cache = true; SET GLOBAL prefetch_all_parquet_files = true',
    );
    await engine.defineViews();
    return engine;
  }

  /**
   * Runs one query. One that runs past the time limit (DUCKDB_QUERY_TIMEOUT_MS, default 30 s, or the request's
   * deadline if that comes first) is interrupted, so its threads are free for the next, and fails with
   * EngineTimeoutError.
   */
  async run(query: SqlQuery): Promise<{ rows: SqlRow[]; stats: Record<string, never> }> {
    await this.refreshViews();
    const pooled = await this.connections.take();
    let timedOut = false;
    let healthy = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        pooled.connection.interrupt();
      },
      Math.max(0, Math.min(queryTimeoutMs(), (requestDeadline() ?? Infinity) - Date.now())),
    );
    try {
      const statement = await pooled.prepare(query.sql);
      bindAll(statement, query.params);
      const reader = await statement.runAndReadAll();
      if (timedOut) throw new EngineTimeoutError();
      healthy = true;
      return { rows: reader.getRowObjectsJS().map(decodeRow), stats: {} };
    } catch (error) {
      throw timedOut ? new EngineTimeoutError() : error;
    } finally {
      clearTimeout(timer);
      this.connections.give(pooled, healthy);
    }
  }

  /** Runs SQL with no parameters (EXPLAIN ANALYZE in benchmarks, maintenance). */
  async runRaw(sql: string): Promise<SqlRow[]> {
    await this.refreshViews();
    const connection = await this.instance.connect();
    try {
      return (await connection.runAndReadAll(sql)).getRowObjectsJS().map(decodeRow);
    } finally {
      connection.closeSync();
    }
  }

  /** The snapshot the store's current link names (each publish makes a new one); undefined over a plain folder. */
  dataVersion(): string | undefined {
    return snapshotOf(this.root);
  }

  close(): void {
    this.connections.close();
    this.instance.closeSync();
  }

  /** Points the views at the current snapshot, and at files once the first ones exist. */
  private async refreshViews(): Promise<void> {
    if (realFolder(this.root) !== this.resolvedRoot || this.views.some((v) => !v.overFiles)) {
      await (this.defining ??= this.defineViews().finally(() => (this.defining = undefined)));
    }
  }

  // Until the first Parquet file exists, a view is an empty relation of the right shape, so queries on an
  // empty store answer zeros instead of failing on an empty glob.
  private async defineViews(): Promise<void> {
    const root = realFolder(this.root);
    const moved = root !== this.resolvedRoot;
    const connection = await this.instance.connect();
    let changed = false;
    try {
      for (const view of this.views) {
        if (view.overFiles && !moved) continue;
        const dir = join(root, view.folder);
        const hasFiles = hasParquet(dir);
        // A fragment twin is complete wherever its folder exists (the store's transactions write it whole); a
        // snapshot without the folder (written before it existed) gets it computed from the fragments.
        const definition = hasFiles
          ? viewOverFilesSql(view.name, dir)
          : view.computed && !existsSync(dir)
            ? `CREATE OR REPLACE VIEW ${view.name} AS ${view.computed}`
            : emptyViewSql(view.name, view.columns);
        if (definition !== view.definition) {
          await connection.run(definition);
          view.definition = definition;
          changed = true;
        }
        view.overFiles = hasFiles;
      }
      this.resolvedRoot = root;
      // Statements prepared before read the views as they were.
      if (changed) this.connections.reset();
    } finally {
      connection.closeSync();
    }
  }
}

/** Each fragment twin computed from the fragments' view, for a snapshot without its folder. */
const computedTwins: Record<FragmentTwinFolder, Sql> = {
  session_counts: sessionCountsOf(trusted(SESSION_FRAGMENTS_TABLE), ['domain', 'dt'], 'branches'),
  unmarked_fragments: unmarkedFragmentsOf(trusted(SESSION_FRAGMENTS_TABLE), ['domain', 'dt']),
};

function queryTimeoutMs(): number {
  const value = Number(process.env.DUCKDB_QUERY_TIMEOUT_MS ?? 30_000);
  return Number.isFinite(value) && value > 0 ? value : 30_000;
}

type ColumnList = (readonly [string, ColumnType | 'date'])[];

/** DuckDB's memory limit for each local instance when DUCKDB_MEMORY_LIMIT is not set. */
export const DEFAULT_DUCKDB_MEMORY_LIMIT = '2GB';

/**
 * A local DuckDB's memory settings: DUCKDB_MEMORY_LIMIT (a size such as `4GB` or `1500MiB`, default
 * DEFAULT_DUCKDB_MEMORY_LIMIT) bounds its buffer pool, which holds the queries' working memory and the cached
 * Parquet bytes (evicted first). What does not fit spills to a folder of its own (`purpose`, this process) under the
 * system's temporary folder rather than under the working directory. The query engine and the store writers'
 * scratch instances (writer/scratch-duckdb.ts) each take it.
 */
export function duckDbMemory(env: NodeJS.ProcessEnv, purpose = 'duckdb'): Record<string, string> {
  const limit = env.DUCKDB_MEMORY_LIMIT?.trim() || DEFAULT_DUCKDB_MEMORY_LIMIT;
  if (!/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(limit))
    throw new Error(`DUCKDB_MEMORY_LIMIT must be a size such as 4GB or 1500MiB, not "${limit}"`);
  return { temp_directory: join(tmpdir(), `analytics-${purpose}-${process.pid}`), memory_limit: limit };
}

/**
 * A file path or glob as a DuckDB string literal, for the statements our own code writes around files (views,
 * COPY, maintenance). Paths come from the data folder and validated domains and dates; quoting is defence in depth.
 */
export function pathLiteral(path: string): string {
  return `'${path.replaceAll("'", "''")}'`;
}

/** read_parquet's options for the store's `domain=<d>/dt=<day>` folders: both read as columns of their own types. */
export const HIVE_PARTITIONS = "hive_partitioning = true, hive_types = {'domain': VARCHAR, 'dt': DATE}";

function viewOverFilesSql(name: string, dir: string): string {
  const glob = pathLiteral(join(dir, '*', '*', '*.parquet'));
  return `CREATE OR REPLACE VIEW ${name} AS SELECT * FROM read_parquet(${glob}, ${HIVE_PARTITIONS})`;
}

function emptyViewSql(name: string, columns: ColumnList): string {
  return `CREATE OR REPLACE VIEW ${name} AS SELECT ${columns.map(([column, type]) => `CAST(NULL AS ${duckdbTypes[type]}) AS ${column}`).join(', ')} WHERE false`;
}

/** The snapshot a store's current link at `path` names; undefined for a plain folder (the data version of both engines over a local store). */
export function snapshotOf(path: string): string | undefined {
  const real = realFolder(path);
  return real === path ? undefined : basename(real);
}

/** The folder `path` names, with a link to a snapshot followed; `path` itself when it does not exist yet. */
export function realFolder(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function hasParquet(eventsDir: string): boolean {
  if (!existsSync(eventsDir)) return false;
  for (const domain of readdirSync(eventsDir)) {
    if (!domain.startsWith('domain=')) continue;
    for (const dt of readdirSync(join(eventsDir, domain))) {
      if (readdirSync(join(eventsDir, domain, dt)).some((f) => f.endsWith('.parquet'))) return true;
    }
  }
  return false;
}

function bindAll(statement: DuckDBPreparedStatement, params: SqlParam[]): void {
  params.forEach((param, i) => {
    const index = i + 1;
    switch (param.type) {
      case 'string':
        return statement.bindVarchar(index, param.value);
      case 'int':
        return statement.bindBigInt(index, BigInt(param.value));
      case 'bool':
        return statement.bindBoolean(index, param.value);
      case 'date':
        return statement.bindDate(
          index,
          new DuckDBDateValue(Math.round(Date.parse(`${param.value}T00:00:00Z`) / 86_400_000)),
        );
      case 'timestamp':
        return statement.bindTimestamp(index, new DuckDBTimestampValue(BigInt(param.value.getTime()) * 1000n));
    }
  });
}

function decodeRow(row: Record<string, unknown>): SqlRow {
  const out: SqlRow = {};
  for (const [key, value] of Object.entries(row)) out[key] = decodeValue(value);
  return out;
}

function decodeValue(value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return String(value);
}
