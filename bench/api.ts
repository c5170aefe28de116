import { ROUTE_FUNCTION_MEMORY_MB } from '../infra/route-function.js';
import { startLocalApi, type LocalApi } from '../local/server/local-api.js';
import {
  finishedStatements,
  statementReads,
  type StatementProfile,
  type StatementReads,
} from '../local/trino/trino-query-info.js';
import type { TrinoAccess } from '../local/trino/trino-server.js';
import { runStatement } from '../local/trino/trino-statements.js';
import { installEngine } from '../shared/engines/registry.js';
import type { QueryEngine } from '../shared/engines/engine.js';
import { createCredential } from '../shared/services/credentials.js';
import type { RequestUsage } from './aws-bill.js';
import { installUsageCounter, takeUsage } from './aws-usage.js';
import type { Dataset } from './dataset.js';
import type { MixQuery } from './query-mix.js';
import { pageSizeOf } from './query-mix.js';
import { journeyFields, value, type BenchEngine, type ResultRow, type RunResult } from './results.js';

// (a) The API over HTTP: the real local server (startLocalApi: dynalite, DuckDB, the handlers) on the data set's
// folder, called with real project keys, so every request pays what a caller pays: HTTP, authentication, the
// rate and usage counters in DynamoDB, validation, the engine and the JSON answer.
// (b) With `trino`, the same server with the Lambdas' Athena engine installed instead of DuckDB for its runs: the
// real Athena SDK, the Athena emulator and Trino reading the store as Athena reads the bucket.

/** The rate limit is 100 requests per key and minute; a fresh key every 90 requests keeps the bench under it. */
const REQUESTS_PER_KEY = 90;

export class ApiEngine implements BenchEngine {
  private token = '';
  private used = REQUESTS_PER_KEY;
  /** Per mix query, its statements' bytes when Trino reads column chunks only (columnChunkBytes). */
  private readonly chunkBytes = new Map<string, number[]>();

  private constructor(
    readonly name: 'api' | 'athena',
    private readonly api: LocalApi,
    private readonly engine: QueryEngine,
    private readonly domain: string,
  ) {}

  /** The API on DuckDB and, with `trino`, the API on the Athena path; closing the first closes both. */
  static async start(dataset: Dataset, options: { trino: boolean; trinoHeapGiB?: number }): Promise<ApiEngine[]> {
    // Result reuse and the answer cache off (the server runs in this process): every run is timed and billed as a
    // first run would be (run.ts turns the cache on for the repeat loads).
    process.env.ANALYTICS_ANSWER_CACHE = 'off';
    installUsageCounter();
    const api = await startLocalApi({
      dataDir: dataset.paths.dataDir,
      engine: options.trino ? 'trino' : 'duckdb',
      resultReuseMinutes: 0,
      ...(options.trinoHeapGiB === undefined ? {} : { trinoHeapGiB: options.trinoHeapGiB }),
    });
    const engines = [new ApiEngine('api', api, api.engine, dataset.spec.domain)];
    if (api.trino) engines.push(new ApiEngine('athena', api, api.trino.engine, dataset.spec.domain));
    return engines;
  }

  async run(query: MixQuery): Promise<RunResult> {
    installEngine(this.engine);
    const token = await this.nextToken();
    const since = new Date();
    takeUsage();
    const started = performance.now();
    const res = await this.post(query, token);
    const body = (await res.json()) as ApiAnswer;
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${query.path} answered ${res.status}: ${JSON.stringify(body)}`);
    return {
      ...(this.name === 'athena' ? await this.usedSince(since, ms, { chunksOf: query.id }) : {}),
      ms,
      engineMs: body.meta.query_ms,
      ...(body.meta.bytes_scanned === undefined ? {} : { bytesScanned: body.meta.bytes_scanned }),
      ...rowsOf(query, body),
    };
  }

  /**
   * Every query sent at once, as the dashboard sends a load's cards, each on a key of its own; what each answered,
   * the load's time (first sent to last answered) and what the load used. Any status is recorded, not thrown:
   * a statement past the engine's deadline is a 504 the dashboard would show.
   */
  async runAtOnce(queries: readonly MixQuery[]): Promise<LoadAtOnce> {
    installEngine(this.engine);
    // A key per request: on AWS each request has a function of its own, while the local server lets one key run
    // only a few requests at once (shared/limits/concurrency.ts).
    const tokens: string[] = [];
    for (const _ of queries)
      tokens.push((await createCredential({ type: 'project', domains: [this.domain], owner: 'bench' })).token);
    const since = new Date();
    takeUsage();
    const started = performance.now();
    const requests = await Promise.all(
      queries.map(async (query, i) => {
        const res = await this.post(query, tokens[i]!);
        await res.arrayBuffer();
        return { id: query.id, status: res.status, ms: performance.now() - started };
      }),
    );
    const wallMs = performance.now() - started;
    const lambdaMs = requests.reduce((sum, r) => sum + r.ms, 0);
    const { usage } = await this.usedSince(since, lambdaMs, { cancelled: true });
    return { wallMs, requests, usage: { ...usage, requests: queries.length } };
  }

  /**
   * The mix as the dashboard sends it: the POST /v1/query queries in one POST /v1/query/batch, the others each alone,
   * all at once (a key per request, as runAtOnce).
   */
  async runBatched(queries: readonly MixQuery[]): Promise<LoadAtOnce> {
    installEngine(this.engine);
    const batched = queries.filter((q) => q.path === '/v1/query');
    const alone = queries.filter((q) => q.path !== '/v1/query');
    const tokens: string[] = [];
    for (const _ of [batched, ...alone])
      tokens.push((await createCredential({ type: 'project', domains: [this.domain], owner: 'bench' })).token);
    const since = new Date();
    takeUsage();
    const started = performance.now();
    const timed = async (id: string, response: Promise<Response>) => {
      const res = await response;
      await res.arrayBuffer();
      return { id, status: res.status, ms: performance.now() - started };
    };
    const requests = await Promise.all([
      timed(
        `batch of ${batched.length}`,
        fetch(`${this.api.url}/v1/query/batch`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens[0]!}`, 'content-type': 'application/json' },
          body: JSON.stringify({ queries: batched.map((q) => q.body) }),
        }),
      ),
      ...alone.map((query, i) => timed(query.id, this.post(query, tokens[i + 1]!))),
    ]);
    const wallMs = performance.now() - started;
    const lambdaMs = requests.reduce((total, r) => total + r.ms, 0);
    const { usage } = await this.usedSince(since, lambdaMs, { cancelled: true });
    return { wallMs, requests, usage: { ...usage, requests: requests.length } };
  }

  close(): Promise<void> {
    return this.api.close();
  }

  /** The bench's request for `query`, with a project key. */
  private post(query: MixQuery, token: string): Promise<Response> {
    return fetch(`${this.api.url}${query.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(query.body),
    });
  }

  /**
   * What the request that started at `since` and took `ms` used of the services AWS bills, and where its statements'
   * time went. With `chunksOf`, its statements' column-chunk bytes too, measured at the query's first run and given
   * with every run of it.
   */
  private async usedSince(
    since: Date,
    ms: number,
    options: { cancelled?: boolean; chunksOf?: string } = {},
  ): Promise<{ usage: RequestUsage; profiles: StatementProfile[] }> {
    const counted = takeUsage();
    const trino = this.api.trino!.trino;
    const reads = await Promise.all(
      (await finishedStatements(trino, 'athena-emulator', since, options)).map((id) => statementReads(trino, id)),
    );
    if (options.chunksOf !== undefined && !this.chunkBytes.has(options.chunksOf))
      this.chunkBytes.set(options.chunksOf, await columnChunkBytes(trino, reads));
    const chunks = options.chunksOf === undefined ? undefined : this.chunkBytes.get(options.chunksOf);
    const usage: RequestUsage = {
      statementBytes: reads.map((r) => r.physicalInputBytes),
      ...(chunks ? { columnChunkBytes: chunks } : {}),
      s3Lists: reads.reduce((sum, r) => sum + r.partitionsListed, 0),
      s3Gets: reads.reduce((sum, r) => sum + r.splitsRead, 0),
      resultPages: counted.resultPages,
      lambdaMs: ms,
      lambdaMemoryMb: ROUTE_FUNCTION_MEMORY_MB,
      dynamoReadUnits: counted.readUnits,
      dynamoWriteUnits: counted.writeUnits,
    };
    return { usage, profiles: reads.map((r) => r.profile) };
  }

  private async nextToken(): Promise<string> {
    if (this.used >= REQUESTS_PER_KEY) {
      this.token = (await createCredential({ type: 'project', domains: [this.domain], owner: 'bench' })).token;
      this.used = 0;
    }
    this.used += 1;
    return this.token;
  }
}

/**
 * The bytes each statement reads when Trino reads only the column chunks it needs: the statements run again, one by
 * one, with the Hive connector's small-file threshold at 0 (by default Trino reads a Parquet file below 3 MB whole, in
 * one GET, and counts all of it as read).
 */
async function columnChunkBytes(trino: TrinoAccess, reads: readonly StatementReads[]): Promise<number[]> {
  const bytes: number[] = [];
  for (const read of reads) {
    const { queryId } = await runStatement(trino, read.query, {
      session: { 'hive.parquet_small_file_threshold': '0B' },
      ...(read.schema ? { schema: read.schema } : {}),
    });
    bytes.push((await statementReads(trino, queryId)).physicalInputBytes);
  }
  return bytes;
}

/** A load sent at once (ApiEngine.runAtOnce). */
export interface LoadAtOnce {
  wallMs: number;
  /** Each request's status and its time from the load's start. */
  requests: { id: string; status: number; ms: number }[];
  /** What the whole load used; its Lambda time is the requests' times added up. */
  usage: RequestUsage;
}

interface ApiAnswer {
  data: Record<string, unknown>[];
  meta: { query_ms: number; bytes_scanned?: number };
  pagination: { total?: number };
}

function rowsOf(query: MixQuery, answer: ApiAnswer): { rows: ResultRow[]; total?: number } {
  const page = answer.data.slice(0, pageSizeOf(query));
  if (query.path === '/v1/journeys/list') {
    return {
      rows: page.map((item) => ({
        key: [String(item.visitor_id)],
        values: Object.fromEntries(journeyFields.map((f) => [f, value(item[f])])),
      })),
      total: answer.pagination.total,
    };
  }
  const dimensions = query.body.dimensions ?? [];
  return {
    rows: page.map((item) => {
      const row = item as { dimensions: Record<string, string>; metrics: Record<string, number> };
      return { key: dimensions.map((d) => row.dimensions[d]!), values: row.metrics };
    }),
  };
}
