import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDbEngine } from '../shared/engines/duckdb-engine.js';
import type { SqlQuery } from '../shared/engines/engine.js';
import { QUERY_DEFAULTS, queryRequestSchema, type AnalyticsQuery } from '../shared/query/analytics-query.js';
import { duckdbDialect } from '../shared/query/dialects.js';
import { printVisitorList } from '../shared/query/journeys-list-sql.js';
import { planVisitorList } from '../shared/query/journeys-plan.js';
import { boundsOf, JOURNEYS_DEFAULTS, visitorListRequestSchema } from '../shared/query/journeys-query.js';
import { printAnalyticsQuery } from '../shared/query/print-analytics-query.js';
import { planAnalyticsQuery, type PlanOptions } from '../shared/query/query-plan.js';
import type { Dataset } from './dataset.js';
import { pageSizeOf, rangeOf, type MixQuery } from './query-mix.js';
import { rowsFromSql, type BenchEngine, type RunResult } from './results.js';

// (b) The API's own SQL run directly in DuckDB: the request is parsed by the same schema, normalised as the
// services normalise it, planned and printed by shared/query, and run with the same parameters on a
// DuckDbEngine over the same files. No HTTP, no keys, no counters: the floor of the local path.
// Also what the plan reads: files and bytes (EXPLAIN ANALYZE), and what Athena would scan and bill.

export interface PlannedQuery {
  sql: SqlQuery;
  /** Stored columns the plan selects from the events (plan.columns). */
  columns: string[];
  dtFrom: string;
  dtTo: string;
}

/** The statement the API runs for a mix query (POST /v1/query or journeys/list, first page). */
export function planOf(query: MixQuery, options: PlanOptions = {}): PlannedQuery {
  const range = rangeOf(query);
  if (query.path === '/v1/journeys/list') {
    const request = visitorListRequestSchema.parse(query.body);
    const plan = planVisitorList({
      domain: request.domain,
      isDev: request.is_dev ?? false,
      range,
      filters: request.filters ?? [],
      bounds: boundsOf(request),
      hasRevenue: request.has_revenue ?? false,
      firstPurchase: request.first_purchase ?? false,
      sort: { field: request.sort_by ?? 'last_seen', order: request.sort_order ?? 'desc' },
      limit: request.limit ?? JOURNEYS_DEFAULTS.listLimit,
      offset: request.offset ?? 0,
    });
    return { sql: printVisitorList(plan, duckdbDialect), columns: plan.columns, dtFrom: range.dtFrom, dtTo: range.dtTo };
  }
  const request = queryRequestSchema.parse(query.body);
  const normalised: AnalyticsQuery = {
    domain: query.body.domain,
    metrics: request.metrics ?? QUERY_DEFAULTS.metrics,
    dimensions: request.dimensions ?? [],
    filters: request.filters ?? [],
    range,
    timeZone: request.timezone ?? 'UTC',
    sort: request.sort ? { field: request.sort.field, order: request.sort.order ?? 'desc' } : null,
    limit: request.limit ?? QUERY_DEFAULTS.limit,
    offset: request.offset ?? 0,
  };
  const plan = planAnalyticsQuery(normalised, options);
  return { sql: printAnalyticsQuery(plan, duckdbDialect), columns: plan.columns, dtFrom: range.dtFrom, dtTo: range.dtTo };
}

export interface ScanFacts {
  /** Per Parquet scan of the plan: files it read and the "Scanning Files: x/y" DuckDB printed. */
  scans: { filesRead: number; scanning: string }[];
  /** Files and bytes in the domain's partitions of the range, counted on disk. */
  filesInRange: number;
  bytesInRange: number;
  filesInDomain: number;
  /** total_bytes_read of DuckDB's profile. */
  bytesRead: number;
  /** Sum of the compressed column chunks of the read columns in the range's files (what Athena scans). */
  athenaBytes: number;
  columnsRead: string[];
  /** The slowest operators of the profiled run: where DuckDB spends the time. */
  operators: { name: string; seconds: number; rows: number }[];
  profiledSeconds: number;
}

export class DuckDbTwin implements BenchEngine {
  readonly name = 'duckdb';
  private chunkSizes: Map<string, Map<string, number>> | undefined;

  private constructor(
    private readonly engine: DuckDbEngine,
    private readonly dataset: Dataset,
  ) {}

  static async open(dataset: Dataset): Promise<DuckDbTwin> {
    return new DuckDbTwin(await DuckDbEngine.open(dataset.paths.eventsDir), dataset);
  }

  async run(query: MixQuery): Promise<RunResult> {
    const { sql } = planOf(query);
    const started = performance.now();
    const { rows } = await this.engine.run(sql);
    return { ms: performance.now() - started, ...rowsFromSql(query, rows, pageSizeOf(query)) };
  }

  async version(): Promise<string> {
    const [row] = await this.engine.runRaw('SELECT version() AS v');
    return String(row?.v);
  }

  /** One profiled run (EXPLAIN ANALYZE) plus the partition files on disk and Athena's scan estimate. */
  async scanFacts(query: MixQuery): Promise<ScanFacts> {
    const planned = planOf(query);
    const { rows } = await this.engine.run({ sql: `EXPLAIN (ANALYZE, FORMAT JSON) ${planned.sql.sql}`, params: planned.sql.params });
    const profile = JSON.parse(String(rows[0]?.explain_value)) as ProfileNode | ProfileNode[];
    const root = Array.isArray(profile) ? profile[0]! : profile;
    const nodes = flatten(root);
    const scans = nodes
      .filter((n) => n.operator_type === 'TABLE_SCAN' && n.extra_info?.Function === 'READ_PARQUET')
      .map((n) => ({ filesRead: Number(n.extra_info?.['Total Files Read'] ?? 0), scanning: String(n.extra_info?.['Scanning Files'] ?? '?') }));
    const operators = nodes
      .filter((n) => typeof n.operator_timing === 'number' && n.operator_type !== 'EXPLAIN_ANALYZE')
      .map((n) => ({ name: n.operator_name ?? n.operator_type ?? '?', seconds: n.operator_timing!, rows: n.operator_cardinality ?? 0 }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 4);

    const inRange = this.partitionFiles(planned.dtFrom, planned.dtTo);
    const columnsRead = [...new Set([...planned.columns, 'ts', 'is_dev'])].sort();
    const sizes = await this.columnChunkSizes();
    const athenaBytes = inRange.files.reduce((sum, file) => sum + columnsRead.reduce((s, c) => s + (sizes.get(file)?.get(c) ?? 0), 0), 0);
    return {
      scans,
      filesInRange: inRange.files.length,
      bytesInRange: inRange.bytes,
      filesInDomain: this.partitionFiles('0000-00-00', '9999-99-99').files.length,
      bytesRead: Number(root.total_bytes_read ?? 0),
      athenaBytes,
      columnsRead,
      operators,
      profiledSeconds: Number(root.latency ?? 0),
    };
  }

  close(): void {
    this.engine.close();
  }

  /** The Parquet files of the domain's `dt` partitions from `dtFrom` to `dtTo`, counted on disk. */
  private partitionFiles(dtFrom: string, dtTo: string): { files: string[]; bytes: number } {
    const domainDir = join(this.dataset.paths.eventsDir, `domain=${this.dataset.spec.domain}`);
    const files: string[] = [];
    let bytes = 0;
    if (!existsSync(domainDir)) return { files, bytes };
    for (const dtDir of readdirSync(domainDir).sort()) {
      const dt = dtDir.replace(/^dt=/, '');
      if (dt < dtFrom || dt > dtTo) continue;
      for (const name of readdirSync(join(domainDir, dtDir))) {
        if (!name.endsWith('.parquet')) continue;
        const file = join(domainDir, dtDir, name);
        files.push(file);
        bytes += statSync(file).size;
      }
    }
    return { files, bytes };
  }

  /** Compressed bytes per (file, column) from parquet_metadata, read once for all the domain's files. */
  private async columnChunkSizes(): Promise<Map<string, Map<string, number>>> {
    if (this.chunkSizes) return this.chunkSizes;
    const glob = join(this.dataset.paths.eventsDir, `domain=${this.dataset.spec.domain}`, '*', '*.parquet').replaceAll("'", "''");
    const rows = await this.engine.runRaw(
      `SELECT file_name, path_in_schema AS col, sum(total_compressed_size) AS bytes FROM parquet_metadata('${glob}') GROUP BY ALL`,
    );
    const sizes = new Map<string, Map<string, number>>();
    for (const row of rows) {
      const file = String(row.file_name);
      if (!sizes.has(file)) sizes.set(file, new Map());
      sizes.get(file)!.set(String(row.col), Number(row.bytes));
    }
    return (this.chunkSizes = sizes);
  }
}

interface ProfileNode {
  operator_type?: string;
  operator_name?: string;
  operator_timing?: number;
  operator_cardinality?: number;
  total_bytes_read?: number;
  latency?: number;
  extra_info?: Record<string, unknown>;
  children?: ProfileNode[];
}

function flatten(node: ProfileNode): ProfileNode[] {
  return [node, ...(node.children ?? []).flatMap(flatten)];
}

/** Athena's price: $5 per TB scanned (1 TB = 2^40 bytes here), at least 10 MB billed per query. */
export function athenaDollars(bytes: number): number {
  return (Math.max(bytes, 10 * 2 ** 20) / 2 ** 40) * 5;
}
