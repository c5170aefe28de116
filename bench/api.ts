import { startLocalApi, type LocalApi } from '../local/server/local-api.js';
import { createCredential } from '../shared/services/credentials.js';
import type { Dataset } from './dataset.js';
import type { MixQuery } from './query-mix.js';
import { pageSizeOf } from './query-mix.js';
import { journeyFields, value, type BenchEngine, type ResultRow, type RunResult } from './results.js';

// (a) The API over HTTP: the real local server (startLocalApi: dynalite, DuckDB, the handlers) on the data set's
// folder, called with real project keys, so every request pays what a caller pays: HTTP, authentication, the
// rate and usage counters in DynamoDB, validation, the engine and the JSON answer.

/** The rate limit is 100 requests per key and minute; a fresh key every 90 requests keeps the bench under it. */
const REQUESTS_PER_KEY = 90;

export class ApiEngine implements BenchEngine {
  readonly name = 'api';
  private token = '';
  private used = REQUESTS_PER_KEY;

  private constructor(
    private readonly api: LocalApi,
    private readonly domain: string,
  ) {}

  static async start(dataset: Dataset): Promise<ApiEngine> {
    return new ApiEngine(await startLocalApi({ dataDir: dataset.paths.dataDir }), dataset.spec.domain);
  }

  async run(query: MixQuery): Promise<RunResult> {
    const token = await this.nextToken();
    const started = performance.now();
    const res = await fetch(`${this.api.url}${query.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(query.body),
    });
    const body = (await res.json()) as ApiAnswer;
    const ms = performance.now() - started;
    if (res.status !== 200) throw new Error(`${query.path} answered ${res.status}: ${JSON.stringify(body)}`);
    return { ms, engineMs: body.meta.query_ms, ...rowsOf(query, body) };
  }

  close(): Promise<void> {
    return this.api.close();
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

interface ApiAnswer {
  data: Record<string, unknown>[];
  meta: { query_ms: number };
  pagination: { total?: number };
}

function rowsOf(query: MixQuery, answer: ApiAnswer): { rows: ResultRow[]; total?: number } {
  const page = answer.data.slice(0, pageSizeOf(query));
  if (query.path === '/v1/journeys/list') {
    return {
      rows: page.map((item) => ({ key: [String(item.visitor_id)], values: Object.fromEntries(journeyFields.map((f) => [f, value(item[f])])) })),
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
