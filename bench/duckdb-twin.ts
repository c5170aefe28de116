import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDbEngine, pathLiteral, realFolder } from '../shared/engines/duckdb-engine.js';
import { derivedRelations, fragmentTwinRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import type { SqlQuery } from '../shared/query/sql/sql.js';
import { queryRequestSchema, type AnalyticsQuery } from '../shared/requests/query.js';
import { EngineRunner } from '../shared/services/engine-runner.js';
import { normaliseQueryRequest } from '../shared/services/query.js';
import { storeShapeFor } from '../shared/services/store-shape.js';
import { athenaCatalog, type StoreCatalog } from '../shared/query/sql/catalog.js';
import { localTarget, type SqlTarget } from '../shared/query/sql/target.js';
import { printVisitorList } from '../shared/query/journeys/print-list.js';
import { withoutRepeats } from '../shared/requests/fields.js';
import { planVisitorList, type VisitorListPlan, type VisitorListPlanOptions } from '../shared/query/journeys/plan.js';
import { listedVisitors } from '../shared/services/journeys.js';
import type { SqlRow } from '../shared/engines/engine.js';
import { boundsOf, JOURNEYS_DEFAULTS, visitorListRequestSchema } from '../shared/requests/journeys.js';
import { printAnalyticsQuery } from '../shared/query/analytics/print.js';
import { planAnalyticsQuery, planQuery, type PlanOptions } from '../shared/query/analytics/plan.js';
import type { Dataset } from './dataset.js';
import { pageSizeOf, rangeOf, type MixQuery } from './query-mix.js';
import { rowsFromSql, type BenchEngine, type RunResult } from './results.js';

// (b) The API's own SQL run directly in DuckDB: the request is parsed by the same schema, normalised as the
// services normalise it, planned and printed by shared/query, and run with the same parameters on a
// DuckDbEngine over the same files. No HTTP, no keys, no counters: the floor of the local path.
// Also what the plan reads: files and bytes (EXPLAIN ANALYZE), and what Athena would scan and bill.

export interface PlannedQuery {
  /** The statement; for a journeys list whose details are read apart (the plan's `statements`), the page's only. */
  sql: SqlQuery;
  /** A journeys list's plan, whose page `listedVisitors` reads as the API does. */
  list?: VisitorListPlan;
  /** Stored columns the plan selects from the events (plan.columns). */
  columns: string[];
  dtFrom: string;
  dtTo: string;
}

/** A /v1/query of the mix as the service normalises it. */
export function analyticsQueryOf(query: MixQuery): AnalyticsQuery {
  return normaliseQueryRequest(queryRequestSchema.parse(query.body), query.body.domain, rangeOf(query));
}

/** The statement the API runs for a mix query (POST /v1/query or journeys/list, first page). */
export function planOf(
  query: MixQuery,
  options: PlanOptions & VisitorListPlanOptions = {},
  target: SqlTarget = localTarget,
): PlannedQuery {
  const range = rangeOf(query);
  if (query.path === '/v1/journeys/list') {
    const request = visitorListRequestSchema.parse(query.body);
    const plan = planVisitorList(
      {
        domain: request.domain,
        isDev: request.is_dev ?? false,
        range,
        filters: withoutRepeats(request.filters ?? []),
        bounds: boundsOf(request),
        hasRevenue: request.has_revenue ?? false,
        firstPurchase: request.first_purchase ?? false,
        sort: { field: request.sort_by ?? 'last_seen', order: request.sort_order ?? 'desc' },
        limit: request.limit ?? JOURNEYS_DEFAULTS.listLimit,
        offset: request.offset ?? 0,
      },
      target,
      options,
    );
    return {
      sql: printVisitorList(plan, target),
      list: plan,
      columns: plan.columns,
      dtFrom: range.dtFrom,
      dtTo: range.dtTo,
    };
  }
  const plan = planAnalyticsQuery(analyticsQueryOf(query), target.catalog, options);
  return { sql: printAnalyticsQuery(plan, target), columns: plan.columns, dtFrom: range.dtFrom, dtTo: range.dtTo };
}

export type Relation = 'events' | DerivedFolder;

/** One Parquet scan of the statement, as DuckDB's profile tells it, with what Athena would read for it. */
export interface ScanFact {
  /** `events`, or the folder of a derived relation: `sessions`, `pageviews` (docs/STORAGE.md). */
  relation: Relation;
  /** The `dt` partitions the scan may read: its File Filters, else the query's range. */
  dtFrom: string;
  dtTo: string;
  /** "Total Files Read" of the scan, and the relation's files in those partitions counted on disk. */
  filesRead: number;
  filesInRange: number;
  /** Columns the scan reads: its projections and the columns its filters test. */
  columns: string[];
  /** Compressed column chunks of those columns in those files (what Athena reads for this scan). */
  athenaBytes: number;
}

export interface ScanFacts {
  scans: ScanFact[];
  /** Event files and bytes in the domain's partitions of the query's range, and all the domain's event files. */
  filesInRange: number;
  bytesInRange: number;
  filesInDomain: number;
  /** Sum over the scans: Athena (Trino) scans a table once per reference, as DuckDB does here. */
  athenaBytes: number;
  /** The slowest operators of the profiled run: where DuckDB spends the time. */
  operators: { name: string; seconds: number; rows: number }[];
  profiledSeconds: number;
}

interface StoredFile {
  dt: string;
  bytes: number;
  /** Compressed bytes per column (parquet_metadata). */
  columns: Map<string, number>;
}

export interface StoredRelation {
  folder: string;
  files: number;
  bytes: number;
  codecs: string[];
}

export class DuckDbTwin implements BenchEngine {
  readonly name: 'duckdb' | 'raw' = 'duckdb';
  private stored: Partial<Record<Relation, StoredFile[]>> = {};

  private constructor(
    private readonly engine: DuckDbEngine,
    private readonly dataset: Dataset,
  ) {}

  static async open(dataset: Dataset): Promise<DuckDbTwin> {
    return new DuckDbTwin(await DuckDbEngine.open(dataset.paths.eventsDir), dataset);
  }

  /** The API's plan options for a mix query: the store's shape where it could choose bitmaps (services/store-shape.ts). */
  async apiOptions(query: MixQuery): Promise<PlanOptions> {
    if (query.path !== '/v1/query') return {};
    const runner = await EngineRunner.forDomain(query.body.domain, this.engine);
    const { question } = planQuery(analyticsQueryOf(query), runner.target.catalog);
    const storeShape = question ? await storeShapeFor(runner, query.body.domain, question) : undefined;
    return storeShape ? { storeShape } : {};
  }

  async run(query: MixQuery): Promise<RunResult> {
    const { sql, list } = planOf(query, await this.apiOptions(query));
    // A journeys list as the API reads it: the page, then (DuckDB) its visitors' details.
    if (list)
      return this.timed(query, () => listedVisitors(async (q) => (await this.engine.run(q)).rows, list, localTarget));
    return this.timed(query, async () => (await this.engine.run(sql)).rows);
  }

  private async timed(query: MixQuery, read: () => Promise<SqlRow[]>): Promise<RunResult> {
    const started = performance.now();
    const rows = await read();
    return { ms: performance.now() - started, ...rowsFromSql(query, rows, pageSizeOf(query)) };
  }

  /**
   * The baseline: the same questions as plain SQL over the raw event rows, the statements the planner writes
   * with every derived relation turned off (no fragments, buckets, visitor days or keys), on the same files; a
   * journeys list as one statement, its details joined to its page.
   */
  rawRows(): BenchEngine {
    const raw = {
      sessionFragments: false,
      pageviewBuckets: false,
      customEventBuckets: false,
      visitorDays: false,
      oneStatement: true,
    };
    return {
      name: 'raw',
      run: async (query) => {
        const { sql } = planOf(query, raw);
        return this.timed(query, async () => (await this.engine.run(sql)).rows);
      },
    };
  }

  /** Files, bytes and codecs of the events, of each derived relation and of the fragment twins, as stored now. */
  async storage(): Promise<StoredRelation[]> {
    const { paths } = this.dataset;
    const folders: [string, string][] = [
      ['events', paths.eventsDir],
      ...derivedRelations.map((r): [string, string] => [r.folder, paths.derivedDirs[r.folder]]),
      ...fragmentTwinRelations.map((r): [string, string] => [r.folder, paths.twinDirs[r.folder]]),
    ];
    const out: StoredRelation[] = [];
    for (const [folder, dir] of folders) {
      const files = existsSync(dir)
        ? (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => f.endsWith('.parquet'))
        : [];
      if (!files.length) continue;
      const rows = await this.engine.runRaw(
        `SELECT DISTINCT compression FROM parquet_metadata(${pathLiteral(join(dir, '*', '*', '*.parquet'))}) ORDER BY 1`,
      );
      out.push({
        folder,
        files: files.length,
        bytes: files.reduce((sum, f) => sum + statSync(join(dir, f)).size, 0),
        codecs: rows.map((r) => String(r.compression)),
      });
    }
    return out;
  }

  /** Events, distinct pages, sessions and visitors of the data set (the shape its generator gave it). */
  async shapeStats(): Promise<{ rows: number; pages: number; sessions: number; visitors: number }> {
    const files = pathLiteral(join(this.dataset.paths.eventsDir, '*', '*', '*.parquet'));
    const [row] = await this.engine.runRaw(
      `SELECT count(*) AS rows, count(DISTINCT url_path) AS pages, count(DISTINCT session_id) FILTER ` +
        `(WHERE session_id <> '') AS sessions, count(DISTINCT visitor_id) AS visitors FROM ` +
        `read_parquet(${files})`,
    );
    return {
      rows: Number(row!.rows),
      pages: Number(row!.pages),
      sessions: Number(row!.sessions),
      visitors: Number(row!.visitors),
    };
  }

  async version(): Promise<string> {
    const [row] = await this.engine.runRaw('SELECT version() AS v');
    return String(row?.v);
  }

  /**
   * Two profiled runs (EXPLAIN ANALYZE) of the plan `options` give. One planned as Athena plans it where the
   * stores differ (visitor ids, not the local keys; whole fragments possibly without paths): per scan the files
   * read against the files on disk, and Athena's scan. One as the API runs it: where DuckDB spends the time (for a
   * journeys list, in its page statement; its details are a second statement).
   */
  async scanFacts(query: MixQuery, options: PlanOptions & VisitorListPlanOptions = {}): Promise<ScanFacts> {
    const { bucketVisitor, fragmentsHavePaths } = athenaCatalog('db', 'events');
    const catalog: StoreCatalog = { ...localTarget.catalog, bucketVisitor, fragmentsHavePaths };
    // As Athena runs a journeys list: its details in the same statement.
    const planned = planOf(query, { ...options, oneStatement: true }, { ...localTarget, catalog });
    const nodes = await this.profile(planned.sql);
    const scans: ScanFact[] = [];
    for (const node of nodes.filter(
      (n) => n.operator_type === 'TABLE_SCAN' && n.extra_info?.Function === 'READ_PARQUET',
    )) {
      const info = node.extra_info!;
      const read = String(info['Filename(s)'] ?? '');
      // DuckDB names the files of the snapshot the store's `current` link points to.
      const relation: Relation =
        derivedRelations.find((r) => read.includes(`${realFolder(this.dataset.paths.derivedDirs[r.folder])}/`))
          ?.folder ?? 'events';
      const fileFilters = String(info['File Filters'] ?? '');
      const dtFilter = /dt BETWEEN '(\d{4}-\d{2}-\d{2})'::DATE AND '(\d{4}-\d{2}-\d{2})'::DATE/.exec(fileFilters);
      const [dtFrom, dtTo] = dtFilter ? [dtFilter[1]!, dtFilter[2]!] : [planned.dtFrom, planned.dtTo];
      // The partial partitions at a range's ends: `dt < first whole dt OR dt > last whole dt` within the range.
      const edges = /\(dt < '(\d{4}-\d{2}-\d{2})'::DATE\) OR \(dt > '(\d{4}-\d{2}-\d{2})'::DATE\)/.exec(fileFilters);
      const files = (await this.storedFiles(relation)).filter(
        (f) => f.dt >= dtFrom && f.dt <= dtTo && (!edges || f.dt < edges[1]! || f.dt > edges[2]!),
      );
      const known = new Set(files.flatMap((f) => [...f.columns.keys()]));
      const filterText = [info.Filters ?? []].flat().join(' ');
      const columns = [
        ...new Set([
          ...((info.Projections as string[] | undefined) ?? []),
          ...[...known].filter((c) => new RegExp(`\\b${c}\\b`).test(filterText)),
        ]),
      ].sort();
      scans.push({
        relation,
        dtFrom,
        dtTo,
        filesRead: Number(info['Total Files Read'] ?? 0),
        filesInRange: files.length,
        columns,
        athenaBytes: files.reduce((sum, f) => sum + columns.reduce((s, c) => s + (f.columns.get(c) ?? 0), 0), 0),
      });
    }
    const local = await this.profile(planOf(query, { ...(await this.apiOptions(query)), ...options }).sql);
    const operators = local
      .filter((n) => typeof n.operator_timing === 'number' && n.operator_type !== 'EXPLAIN_ANALYZE')
      .map((n) => ({
        name: n.operator_name ?? n.operator_type ?? '?',
        seconds: n.operator_timing!,
        rows: n.operator_cardinality ?? 0,
      }))
      .sort((a, b) => b.seconds - a.seconds)
      .slice(0, 4);
    const events = await this.storedFiles('events');
    const inRange = events.filter((f) => f.dt >= planned.dtFrom && f.dt <= planned.dtTo);
    return {
      scans,
      filesInRange: inRange.length,
      bytesInRange: inRange.reduce((sum, f) => sum + f.bytes, 0),
      filesInDomain: events.length,
      athenaBytes: scans.reduce((sum, s) => sum + s.athenaBytes, 0),
      operators,
      profiledSeconds: Number(local[0]!.latency ?? 0),
    };
  }

  /** The operators of one profiled run of `sql`, the root first. */
  private async profile(sql: SqlQuery): Promise<ProfileNode[]> {
    const { rows } = await this.engine.run({ sql: `EXPLAIN (ANALYZE, FORMAT JSON) ${sql.sql}`, params: sql.params });
    const profile = JSON.parse(String(rows[0]?.explain_value)) as ProfileNode | ProfileNode[];
    return flatten(Array.isArray(profile) ? profile[0]! : profile);
  }

  close(): void {
    this.engine.close();
  }

  /** The domain's files of a relation with their `dt`, size and column chunk sizes, read once. */
  private async storedFiles(relation: Relation): Promise<StoredFile[]> {
    const cached = this.stored[relation];
    if (cached) return cached;
    const root = relation === 'events' ? this.dataset.paths.eventsDir : this.dataset.paths.derivedDirs[relation];
    const domainDir = join(root, `domain=${this.dataset.spec.domain}`);
    const files = new Map<string, StoredFile>();
    if (existsSync(domainDir)) {
      for (const dtDir of readdirSync(domainDir)) {
        for (const name of readdirSync(join(domainDir, dtDir)).filter((n) => n.endsWith('.parquet'))) {
          const path = join(domainDir, dtDir, name);
          files.set(path, { dt: dtDir.replace(/^dt=/, ''), bytes: statSync(path).size, columns: new Map() });
        }
      }
    }
    if (files.size > 0) {
      const glob = pathLiteral(join(domainDir, '*', '*.parquet'));
      const chunks = await this.engine.runRaw(
        // A list's chunks sit at `<column>, list, element`: counted under the column.
        `SELECT file_name, split_part(path_in_schema, ',', 1) AS col, sum(total_compressed_size) AS bytes FROM parquet_metadata(${glob}) GROUP BY ALL`,
      );
      for (const chunk of chunks)
        files.get(String(chunk.file_name))?.columns.set(String(chunk.col), Number(chunk.bytes));
    }
    return (this.stored[relation] = [...files.values()]);
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
