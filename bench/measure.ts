import type { MixQuery } from './query-mix.js';
import type { BenchEngine, RunResult } from './results.js';

// Timing one query on one engine: warm-up runs (not counted), then up to `repeat` timed runs, stopping early once
// `minRuns` are done and the time budget is spent (so a slow peer does not take an hour).

export interface TimingOptions {
  warmup: number;
  repeat: number;
  minRuns: number;
  budgetMs: number;
}

export interface Cell {
  times: number[];
  p50: number;
  p95: number;
  /** API only: p50 of the engine time the API itself reports (meta.query_ms). */
  engineP50?: number;
  result?: RunResult;
  error?: string;
}

export async function measure(engine: BenchEngine, query: MixQuery, options: TimingOptions): Promise<Cell> {
  try {
    for (let i = 0; i < options.warmup; i++) await engine.run(query);
    const runs: RunResult[] = [];
    const started = performance.now();
    while (runs.length < options.repeat) {
      runs.push(await engine.run(query));
      if (runs.length >= options.minRuns && performance.now() - started > options.budgetMs) break;
    }
    const times = runs.map((r) => r.ms);
    const engineTimes = runs.flatMap((r) => (r.engineMs === undefined ? [] : [r.engineMs]));
    return {
      times,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      ...(engineTimes.length ? { engineP50: percentile(engineTimes, 50) } : {}),
      result: runs[0],
    };
  } catch (error) {
    return { times: [], p50: NaN, p95: NaN, error: (error as Error).message.slice(0, 300) };
  }
}

/** Nearest-rank percentile (with 10 runs, p95 is the slowest run). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
