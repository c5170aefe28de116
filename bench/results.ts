import type { StatementProfile } from '../local/trino/trino-query-info.js';
import type { RequestUsage } from './aws-bill.js';
import type { MixQuery } from './query-mix.js';

// What every engine of the bench answers, in one comparable shape, and the check that two answers agree.
// SQL engines (the DuckDB twin, ClickHouse, PostgreSQL) name their columns like the API's printer does:
// `d0`, `d1` for dimensions and the metric names for /v1/query; the visitor list item fields for journeys.

export type Value = string | number | null;

export interface ResultRow {
  key: string[];
  values: Record<string, Value>;
}

export interface RunResult {
  ms: number;
  rows: ResultRow[];
  /** Journeys only: the matching visitor total. */
  total?: number;
  /** API only: the engine time the API reports (`meta.query_ms`). */
  engineMs?: number;
  /** The Athena path only: the bytes the engine read (`meta.bytes_scanned`). */
  bytesScanned?: number;
  /** The Athena path only: what the request used of each service AWS bills (bench/aws-bill.ts). */
  usage?: RequestUsage;
  /** The Athena path only: where each of its statements' time went on Trino. */
  profiles?: StatementProfile[];
}

export interface BenchEngine {
  readonly name: 'api' | 'athena' | 'duckdb' | 'raw' | 'clickhouse' | 'postgres';
  run(query: MixQuery): Promise<RunResult>;
}

/** Fields of a journeys list item the bench compares across engines. */
export const journeyFields = [
  'pageview_count',
  'session_count',
  'event_count',
  'total_revenue_cents',
  'revenue_event_count',
  'first_seen',
  'last_seen',
  'country',
  'browser',
  'os',
  'device',
  'first_referrer',
  'entry_page',
] as const;

/** Rows of a SQL engine in the printer's column names, cut to the page size. */
export function rowsFromSql(
  query: MixQuery,
  rows: Record<string, unknown>[],
  pageSize: number,
): { rows: ResultRow[]; total?: number } {
  const page = rows.slice(0, pageSize);
  if (query.path === '/v1/journeys/list') {
    return {
      rows: page.map((row) => ({
        key: [String(row.visitor_id)],
        values: Object.fromEntries(journeyFields.map((f) => [f, value(row[f])])),
      })),
      total: rows.length ? Number(rows[0]!.total) : 0,
    };
  }
  const dimensions = query.body.dimensions ?? [];
  return {
    rows: page.map((row) => ({
      key: dimensions.map((_, i) => String(row[`d${i}`])),
      values: Object.fromEntries(query.body.metrics.map((m) => [m, Number(row[m] ?? 0)])),
    })),
  };
}

export function value(v: unknown): Value {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number') return v;
  const text = String(v);
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

/** Empty when `other` answers the same rows in the same order as `reference`, else what differs (first few). */
export function differences(reference: RunResult, other: RunResult): string[] {
  const problems: string[] = [];
  if (reference.total !== undefined && reference.total !== other.total)
    problems.push(`total ${other.total} vs ${reference.total}`);
  if (reference.rows.length !== other.rows.length)
    problems.push(`${other.rows.length} rows vs ${reference.rows.length}`);
  const n = Math.min(reference.rows.length, other.rows.length);
  for (let i = 0; i < n && problems.length < 4; i++) {
    const a = reference.rows[i]!;
    const b = other.rows[i]!;
    if (a.key.join('|') !== b.key.join('|')) {
      problems.push(`row ${i + 1}: ${b.key.join(' × ')} vs ${a.key.join(' × ')}`);
      continue;
    }
    for (const [name, expected] of Object.entries(a.values)) {
      const got = b.values[name] ?? null;
      const same =
        typeof expected === 'number' && typeof got === 'number'
          ? Math.abs(expected - got) <= 0.011
          : String(expected ?? '') === String(got ?? '');
      if (!same) problems.push(`row ${i + 1} (${a.key.join(' × ')}) ${name}: ${got} vs ${expected}`);
    }
  }
  return problems;
}
