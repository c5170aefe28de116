import type { RequestUsage } from './aws-bill.js';
import type { MixQuery } from './query-mix.js';
import type { BenchEngine, RunResult } from './results.js';

// Timing one query on every engine: warm-up runs (not counted), then rounds in which each engine runs the query
// once, so a burst of other work on the machine hits all engines alike rather than whichever ran then.
// An engine leaves the rounds after `repeat` runs, or once it has `minRuns` and has spent the time budget (so a
// slow peer does not take an hour); an engine that fails leaves with its error.

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
  /** The Athena path only: the bytes the first timed run read, and what it used of each billed service. */
  bytes?: number;
  usage?: RequestUsage;
  result?: RunResult;
  error?: string;
}

export async function measureQuery(
  engines: BenchEngine[],
  query: MixQuery,
  options: TimingOptions,
): Promise<Map<BenchEngine, Cell>> {
  const runs = new Map<BenchEngine, RunResult[]>(engines.map((e) => [e, []]));
  const errors = new Map<BenchEngine, string>();
  const attempt = async (engine: BenchEngine, timed: boolean) => {
    try {
      const result = await engine.run(query);
      if (timed) runs.get(engine)!.push(result);
    } catch (error) {
      errors.set(engine, (error as Error).message.slice(0, 300));
    }
  };
  for (let i = 0; i < options.warmup; i++)
    for (const engine of engines) if (!errors.has(engine)) await attempt(engine, false);
  const active = (engine: BenchEngine) => {
    const done = runs.get(engine)!;
    const spent = done.reduce((sum, r) => sum + r.ms, 0);
    return (
      !errors.has(engine) &&
      done.length < options.repeat &&
      !(done.length >= options.minRuns && spent > options.budgetMs)
    );
  };
  while (engines.some(active)) for (const engine of engines.filter(active)) await attempt(engine, true);

  return new Map(
    engines.map((engine) => {
      const error = errors.get(engine);
      if (error) return [engine, { times: [], p50: NaN, p95: NaN, error }];
      const done = runs.get(engine)!;
      const times = done.map((r) => r.ms);
      const engineTimes = done.flatMap((r) => (r.engineMs === undefined ? [] : [r.engineMs]));
      const cell: Cell = { times, p50: percentile(times, 50), p95: percentile(times, 95), result: done[0] };
      if (engineTimes.length) cell.engineP50 = percentile(engineTimes, 50);
      if (done[0]?.bytesScanned !== undefined) cell.bytes = done[0].bytesScanned;
      if (done[0]?.usage) cell.usage = done[0].usage;
      return [engine, cell];
    }),
  );
}

/** Nearest-rank percentile (with 10 runs, p95 is the slowest run). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}
