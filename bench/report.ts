import { S3_ZSTD_LEVEL } from '../writer/parquet-codec.js';
import { billOf, sumBills, AWS_PRICES, type Bill, type RequestUsage } from './aws-bill.js';
import type { Dataset } from './dataset.js';
import { athenaDollars, type ScanFacts, type StoredRelation } from './duckdb-twin.js';
import type { BundleFigures } from './lambda.js';
import { formatMs } from './chart.js';
import type { Cell, TimingOptions } from './measure.js';
import { mixIds, type MixQuery } from './query-mix.js';
import type { BenchEngine } from './results.js';
import type { LoadAtOnce } from './api.js';

// The markdown of docs/BENCHMARKS.md, from one run's figures. Every number in it was measured in that run.
// The file is shared: other tools and people add their own `## ` sections (npm run load's `## Load`, ...), which
// a run keeps, after its own sections, in their order.

export type EngineName = BenchEngine['name'];

export const engineLabels: Record<EngineName, string> = {
  api: 'API (HTTP)',
  athena: 'Athena path (Trino)',
  duckdb: 'DuckDB direct',
  raw: 'DuckDB on raw events',
  clickhouse: 'ClickHouse',
  postgres: 'PostgreSQL',
};

export interface QueryFigures {
  query: MixQuery;
  cells: Partial<Record<EngineName, Cell>>;
  /** Per engine other than the API: how its answer differs from the API's (empty: the same rows). */
  mismatches: Partial<Record<EngineName, string[]>>;
  scan?: ScanFacts;
  /** The Athena path with the answer cache on, after a first load filled it: the repeat's p50 and use. */
  repeat?: { p50: number; usage?: RequestUsage };
}

export interface BenchFigures {
  command: string;
  startedAt: Date;
  seconds: number;
  /** `load`: 1-minute load averages sampled during the run. */
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; os: string; load: number[] };
  versions: Partial<Record<EngineName, string>>;
  dataset: Dataset;
  /** The store as the run read it: events and derived relations. */
  storage: StoredRelation[];
  timing: TimingOptions;
  skipped: { engine: EngineName; reason: string }[];
  peerTables: Partial<Record<EngineName, number>>;
  queries: QueryFigures[];
  bundles: BundleFigures[] | string | null;
  /** The Athena path: the mix sent at once, a few times (ApiEngine.runAtOnce). */
  loadsAtOnce?: LoadAtOnce[];
  /** The mix as the dashboard sends a load: its POST /v1/query queries in one batch (ApiEngine.runBatched). */
  batchedLoads?: LoadAtOnce[];
}

/** The deployed path's goals for the whole mix (docs/DEPLOY.md, "Speed and cost"). */
const ATHENA_TARGET = {
  p50Ms: 1500,
  mixSumMs: 6000,
  bytesPerLoad: 200 * 2 ** 20,
  dollarsPer1000Loads: 1,
  repeatP50Ms: 50,
};

/** Bytes as MiB with one decimal, as every table of the report shows them. */
function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

const TARGET = {
  apiOverDuckdb: 1.5,
  apiOverClickhouse: 2,
  postgresOverApi: 20,
  bundleBytes: 400 * 1024,
  p50At100M: 1000,
  mixSumAt10M: 4000,
  p50At10M: 500,
};

/** The `## ` sections this report writes; any other section of the file is kept as it is. */
const ownSections = [
  'Machine and data',
  'Dashboard mix: latency',
  'The Athena path on Trino',
  'Targets',
  'Where the time goes',
  'Partition pruning and Athena cost',
  'Lambda bundles',
  'How each engine is measured',
];

/** `report` followed by the sections of `existing` (the current file) that other writers own. */
export function mergeReport(existing: string, report: string): string {
  const sections = existing.split(/^(?=## )/m).filter((s) => s.startsWith('## '));
  const kept = sections.filter((s) => !ownSections.includes(s.slice(3, s.indexOf('\n')).trim()));
  return `${[report.trimEnd(), ...kept.map((s) => s.trimEnd())].join('\n\n')}\n`;
}

export function renderReport(f: BenchFigures): string {
  const ran = (['api', 'athena', 'duckdb', 'clickhouse', 'postgres'] as EngineName[]).filter((e) =>
    f.queries.some((q) => q.cells[e]),
  );
  const out: string[] = [];
  const p50 = (q: QueryFigures, e: EngineName) => q.cells[e]?.p50 ?? NaN;

  out.push('# Benchmarks', '');
  out.push(
    `Written by \`npm run bench\` (bench/run.ts) on ${f.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, in ${Math.round(f.seconds / 60)} min. ` +
      `Command: \`${f.command}\`. Every figure below comes from that one run on one machine; the API, DuckDB, ClickHouse and ` +
      `PostgreSQL answered the same queries over the same rows, each query warmed and then repeated in rounds across the engines.`,
    '',
    '![p50 per query and engine, log scale](benchmarks.png)',
    '',
    'Run it: `npm run bench` (10M events; the API and DuckDB), `npm run bench -- --peers` (also ClickHouse and PostgreSQL, ' +
      'installed from Debian and started on 127.0.0.1 by the bench, stopped at the end), `--rows 1M` for a quick run, `--100m` for ' +
      '100M events, `--repeat`, `--warmup`, `--budget SECONDS`, `--only ID,ID`, `--codec zstd` (every file in the codec and ZSTD level the S3 writers write), `--no-trino`, `--no-lambda`, `--no-write`, `--trino-heap GIB` (the heap of the local Trino, 2 by default; the server runs two statements per GiB at once). The generated data set ' +
      "and the peers' loaded tables are cached under `.bench/` and reused by later runs with the same seed and size.",
    '',
  );

  out.push('## Machine and data', '');
  out.push('| | |', '|---|---|');
  out.push(
    `| machine | ${f.machine.cpus} cores (${f.machine.cpuModel}), ${f.machine.memoryGiB.toFixed(0)} GiB memory, ${f.machine.os} |`,
  );
  const load = f.machine.load;
  out.push(
    `| load average (1 min) during the run | mean ${(sum(load) / load.length).toFixed(1)}, from ${Math.min(...load).toFixed(1)} to ${Math.max(...load).toFixed(1)} ` +
      `(${f.machine.cpus} cores: above ${f.machine.cpus} other work on the machine competed with the bench) |`,
  );
  out.push(
    `| software | Node ${f.machine.node}, DuckDB ` +
      `${f.versions.duckdb ?? '?'}${f.versions.clickhouse ? `, ClickHouse ${f.versions.clickhouse}` : ''}${f.versions.postgres ? `, PostgreSQL ${f.versions.postgres}` : ''} |`,
  );
  const d = f.dataset;
  out.push(
    `| data set | ${d.rows.toLocaleString('en-US')} events, one site (\`${d.spec.domain}\`), ${d.spec.days} days to ${d.spec.endDate}, seed ${d.spec.seed} |`,
  );
  const stored = f.storage.map((r) => `${r.folder} ${r.files} files, ${mib(r.bytes)}`).join('; ');
  const codecs = [...new Set(f.storage.flatMap((r) => r.codecs))].join(', ');
  out.push(
    `| Parquet | ${stored} (${codecs}); \`domain=/dt=\` partitions written by the importer (writer/importer.ts), derived relations in docs/STORAGE.md |`,
  );
  out.push(
    `| generation | ${d.generationSeconds.toFixed(0)} s through the importer ` +
      `(${Math.round(d.rows / d.generationSeconds).toLocaleString('en-US')} ` +
      `rows/s)${d.reused ? ', cached from an earlier run' : ''} |`,
  );
  for (const e of ['clickhouse', 'postgres'] as EngineName[]) {
    if (f.peerTables[e] !== undefined) out.push(`| ${engineLabels[e]} table | ${mib(f.peerTables[e]!)} on disk |`);
  }
  out.push(
    `| timing | per query: ${f.timing.warmup} warm-up run(s) on each engine, then rounds in which each ` +
      `engine runs the query once, ${f.timing.repeat} rounds, or fewer for an engine (at least ` +
      `${f.timing.minRuns}) once its runs add up to ${f.timing.budgetMs / 1000} s; p95 is nearest-rank ` +
      `(with 10 runs, the slowest) |`,
  );
  for (const s of f.skipped)
    out.push(`| ${engineLabels[s.engine]} | skipped: ${s.reason.replace(/\s+/g, ' ').replaceAll('|', '/')} |`);
  out.push('');

  out.push('## Dashboard mix: latency', '');
  const head = [
    'query',
    ...ran.flatMap((e) => [`${engineLabels[e]} p50`, 'p95']),
    `runs (${ran.map((e) => engineLabels[e].split(' ')[0]).join('/')})`,
  ];
  const ratios: [string, (q: QueryFigures) => number][] = [];
  if (ran.includes('duckdb')) ratios.push(['API / DuckDB', (q) => p50(q, 'api') / p50(q, 'duckdb')]);
  if (ran.includes('clickhouse')) ratios.push(['API / ClickHouse', (q) => p50(q, 'api') / p50(q, 'clickhouse')]);
  if (ran.includes('postgres')) ratios.push(['PostgreSQL / API', (q) => p50(q, 'postgres') / p50(q, 'api')]);
  out.push(`| ${[...head, ...ratios.map(([n]) => n), 'same answer'].join(' | ')} |`);
  out.push(`|${[...head, ...ratios, 0].map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
  for (const q of f.queries) {
    const cells = ran.flatMap((e) => {
      const c = q.cells[e];
      return c?.error ? ['error', '–'] : [formatMs(c?.p50 ?? NaN), formatMs(c?.p95 ?? NaN)];
    });
    const counts = ran.map((e) => q.cells[e]?.times.length ?? 0);
    const runs = counts.every((n) => n === counts[0]) ? String(counts[0]) : counts.join('/');
    out.push(`| ${[q.query.id, ...cells, runs, ...ratios.map(([, r]) => ratio(r(q))), sameAnswer(q)].join(' | ')} |`);
  }
  const sums = ran.flatMap((e) => [formatMs(sum(f.queries.map((q) => p50(q, e)))), '']);
  const sumRatio = (a: EngineName, b: EngineName) =>
    ratio(sum(f.queries.map((q) => p50(q, a))) / sum(f.queries.map((q) => p50(q, b))));
  const sumRatios = ratios.map(([n]) =>
    n === 'API / DuckDB'
      ? sumRatio('api', 'duckdb')
      : n === 'API / ClickHouse'
        ? sumRatio('api', 'clickhouse')
        : sumRatio('postgres', 'api'),
  );
  out.push(`| **sum of p50** | ${[...sums, '', ...sumRatios, ''].join(' | ')} |`, '');
  out.push(...f.queries.map((q) => `- \`${q.query.id}\`: ${q.query.title}`), '');
  const errors = f.queries.flatMap((q) =>
    ran.flatMap((e) => (q.cells[e]?.error ? [`- ${q.query.id} on ${engineLabels[e]}: ${q.cells[e]!.error}`] : [])),
  );
  const mismatches = f.queries.flatMap((q) =>
    Object.entries(q.mismatches).flatMap(([e, m]) =>
      m && m.length ? [`- ${q.query.id}, ${engineLabels[e as EngineName]} vs the API: ${m.join('; ')}`] : [],
    ),
  );
  if (errors.length) out.push('Errors:', '', ...errors, '');
  if (mismatches.length) out.push('Answers that differ from the API:', '', ...mismatches, '');

  if (ran.includes('athena')) out.push(...athenaSection(f), '');

  out.push('## Targets', '');
  out.push('| target | measured | met |', '|---|---|---|');
  const perQuery = (name: string, r: (q: QueryFigures) => number, ok: (v: number) => boolean, worst: 'max' | 'min') => {
    const values = f.queries.map((q) => ({ id: q.query.id, v: r(q) })).filter((x) => Number.isFinite(x.v));
    if (!values.length) return;
    const passing = values.filter((x) => ok(x.v)).length;
    const w = values.reduce((a, b) => ((worst === 'max' ? b.v > a.v : b.v < a.v) ? b : a));
    out.push(
      `| ${name} | ${passing} of ${values.length} queries; worst ${w.id} ${ratio(w.v)} | ${passing === values.length ? 'yes' : 'no'} |`,
    );
  };
  if (ran.includes('duckdb'))
    perQuery(
      `API p50 ≤ ${TARGET.apiOverDuckdb}x direct DuckDB`,
      (q) => p50(q, 'api') / p50(q, 'duckdb'),
      (v) => v <= TARGET.apiOverDuckdb,
      'max',
    );
  if (ran.includes('clickhouse'))
    perQuery(
      `API p50 ≤ ${TARGET.apiOverClickhouse}x ClickHouse`,
      (q) => p50(q, 'api') / p50(q, 'clickhouse'),
      (v) => v <= TARGET.apiOverClickhouse,
      'max',
    );
  if (ran.includes('postgres'))
    perQuery(
      `API ≥ ${TARGET.postgresOverApi}x faster than PostgreSQL (p50)`,
      (q) => p50(q, 'postgres') / p50(q, 'api'),
      (v) => v >= TARGET.postgresOverApi,
      'min',
    );
  if (Array.isArray(f.bundles)) {
    const over = f.bundles.filter((b) => b.bytes > TARGET.bundleBytes);
    const largest = f.bundles.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    out.push(
      `| every Lambda bundle ≤ 400 KB | largest ${largest.name} ${kb(largest.bytes)} KB; ${over.length} over | ${over.length ? 'no' : 'yes'} |`,
    );
  }
  const slowest = f.queries.reduce((a, b) => (p50(b, 'api') > p50(a, 'api') ? b : a));
  // The storage issue's bar (docs/STORAGE.md), set for the full mix on the 10M set.
  if (d.rows === 10_000_000 && f.queries.length === mixIds.length) {
    const apiSum = sum(f.queries.map((q) => p50(q, 'api')));
    out.push(
      `| 10M rows: sum of the mix's p50 ≤ 4 s (API) | ${formatMs(apiSum)} | ${apiSum <= TARGET.mixSumAt10M ? 'yes' : 'no'} |`,
    );
    out.push(
      `| 10M rows: no query's p50 above 500 ms (API) | slowest ${slowest.query.id} ${formatMs(p50(slowest, 'api'))} | ${p50(slowest, 'api') <= TARGET.p50At10M ? 'yes' : 'no'} |`,
    );
  }
  if (ran.includes('athena') && f.queries.length === mixIds.length) out.push(...athenaTargets(f));
  if (d.rows >= 100_000_000) {
    out.push(
      `| 100M rows: every dashboard query p50 < 1 s (API) | slowest ${slowest.query.id} ${formatMs(p50(slowest, 'api'))} | ${p50(slowest, 'api') < TARGET.p50At100M ? 'yes' : 'no'} |`,
    );
  } else {
    out.push(
      `| 100M rows: every dashboard query p50 < 1 s (API) | not measured in this run ` +
        `(${d.rows.toLocaleString('en-US')} rows; \`--100m\`); here the slowest is ${slowest.query.id} ` +
        `${formatMs(p50(slowest, 'api'))} | – |`,
    );
  }
  out.push('');

  if (f.queries.some((q) => q.scan)) {
    out.push('## Where the time goes', '');
    out.push(
      'The API time splits into the engine time the API reports (`meta.query_ms`, around the DuckDB call) and everything else ' +
        '(HTTP, authentication, the rate and usage counters in DynamoDB, validation, planning, JSON). The operators are the four ' +
        'slowest of one profiled DuckDB run (`EXPLAIN (ANALYZE, FORMAT JSON)` of the same SQL; operator times summed over threads); ' +
        'for the journeys list, of its page statement only: its details are a second statement (docs/JOURNEYS.md).',
      '',
    );
    out.push(
      '| query | API p50 | engine part | outside the engine | profiled run | slowest operators |',
      '|---|---:|---:|---:|---:|---|',
    );
    for (const q of f.queries) {
      const api = q.cells.api;
      const engine = api?.engineP50 ?? NaN;
      const ops =
        q.scan?.operators
          .map((o) => `${o.name} ${formatMs(o.seconds * 1000)} (${o.rows.toLocaleString('en-US')} rows)`)
          .join(', ') ?? '';
      out.push(
        `| ${q.query.id} | ${formatMs(api?.p50 ?? NaN)} | ${formatMs(engine)} | ${formatMs((api?.p50 ?? NaN) - engine)} | ${formatMs((q.scan?.profiledSeconds ?? NaN) * 1000)} | ${ops} |`,
      );
    }
    out.push('');

    out.push('## Partition pruning and Athena cost', '');
    const codecs = [...new Set(f.storage.flatMap((r) => r.codecs))].join(', ');
    // A ZSTD data set is written as the S3 writers write (bench/dataset.ts).
    const onlyZstd = f.dataset.spec.codec === 'zstd';
    out.push(
      'One entry per Parquet scan of the statement as Athena would run it (visitor ids rather than the local keys; a piece for whole ' +
        "fragments without paths, docs/STORAGE.md), as DuckDB's profile (`EXPLAIN ANALYZE`) of that form reports it: the relation (`events`, " +
        '`sessions` for the stored session fragments, `pageviews` or `pages` for the pageview or page ' +
        'buckets, `visitors` for the visitor days of docs/STORAGE.md), the files it read ("Total Files ' +
        'Read") against the files of ' +
        "that relation counted on disk in the `dt` partitions the scan may read (its file filter, else the query's range), and the " +
        'columns it reads (projections and filter columns). Athena bills the column chunks it reads: the estimate sums ' +
        '`total_compressed_size` from `parquet_metadata()` of those columns in those files, scan by scan (Trino scans a table once per ' +
        'reference), priced at $5 per TB (2^40 bytes) with the 10 MB minimum per query. It counts whole files in range: row groups that ' +
        '`ts` statistics would skip are counted too (an upper bound). DuckDB itself reports no byte count for Parquet scans. The bytes are ' +
        `those of the local files in their codecs (Machine and data: ${codecs})${
          onlyZstd
            ? `, at ZSTD level ${S3_ZSTD_LEVEL} as the S3 writers write them.`
            : '; the files `import --s3` writes are all ZSTD and smaller, so for S3 these figures are too high; "What Athena would scan" below has them for a ZSTD copy.'
        }`,
      '',
    );
    out.push(
      '| query | scans: files read / files in range (columns) | pruned exactly | Athena scan | event files in range | $ per query | $ per 1,000 |',
    );
    out.push('|---|---|---|---:|---:|---:|---:|');
    let dollars = 0;
    for (const q of f.queries) {
      const s = q.scan;
      if (!s) continue;
      const scans = s.scans
        .map((x) => `${x.relation} ${x.filesRead}/${x.filesInRange} (${x.columns.length})`)
        .join(', ');
      const exact = s.scans.length > 0 && s.scans.every((x) => x.filesRead === x.filesInRange);
      const cost = athenaDollars(s.athenaBytes);
      dollars += cost;
      out.push(
        `| ${q.query.id} | ${scans} | ${exact ? 'yes' : 'no'} | ${mib(s.athenaBytes)} | ${s.filesInRange} of ` +
          `${s.filesInDomain}, ${mib(s.bytesInRange)} | $${cost.toFixed(6)} | $${(cost * 1000).toFixed(2)} |`,
      );
    }
    out.push(
      `| **one dashboard load** | | | | | **$${dollars.toFixed(5)}** | **$${(dollars * 1000).toFixed(2)}** |`,
      '',
    );
  }

  out.push('## Lambda bundles', '');
  if (typeof f.bundles === 'string') out.push(`Not measured: ${f.bundles}`, '');
  else if (!f.bundles) out.push('Not measured in this run (`--no-lambda`).', '');
  else {
    out.push(
      "The assets of `cdk synth` (the stack's own esbuild bundling, into `.bench/`), and the median time to `import()` each in a fresh " +
        'Node process on this machine (module initialisation only; no Lambda runtime). The stack sets NODE_OPTIONS=--enable-source-maps.',
      '',
    );
    out.push(
      '| function | bundle | gzip | init (with source maps) | init (without) | ≤ 400 KB |',
      '|---|---:|---:|---:|---:|---|',
    );
    for (const b of f.bundles) {
      out.push(
        `| ${b.name} | ${kb(b.bytes)} KB | ${kb(b.gzipBytes)} KB | ${formatMs(b.initMs)} | ${formatMs(b.initMsNoSourceMaps)} | ${b.bytes <= TARGET.bundleBytes ? 'yes' : 'no'} |`,
      );
    }
    out.push('');
  }

  out.push('## How each engine is measured', '');
  out.push(
    "- **API (HTTP)**: `startLocalApi` on the data set's folder (dynalite, DuckDB, the real handlers behind the local HTTP server), " +
      'called with `fetch` and a real project key (a fresh key every 90 requests keeps under the 100/min rate limit). Time: request sent to ' +
      'JSON parsed. The server logs at WARN during the bench.',
    '- **DuckDB direct**: the statement the API runs, built from the same request by the same schema, planner and printer ' +
      '(shared/query, DuckDB dialect), run with the same parameters on its own `DuckDbEngine` over the same files. Time: `engine.run`.',
    "- **ClickHouse**: Debian's `clickhouse-server` on 127.0.0.1, rows exported from the same Parquet files by DuckDB as CSV and loaded into a " +
      'MergeTree `PARTITION BY toYYYYMM(ts) ORDER BY (domain, toDate(ts), visitor_id)` (merged with OPTIMIZE FINAL); each query written ' +
      'by hand (bench/clickhouse.ts) after docs/API.md, with exact `uniqExact` visitors. Time: HTTP round trip (`FORMAT JSON`). Debian ships ' +
      'ClickHouse 18.16 (2018): no DateTime64 (seconds in `ts`, milliseconds in `ts_ms`), no window functions (the journeys total is a second pass).',
    "- **PostgreSQL**: Debian's PostgreSQL 15 in a cluster of the bench's own on 127.0.0.1 (C locale; shared_buffers 4GB, work_mem 256MB, " +
      'effective_cache_size 12GB, 2 parallel workers per gather, random_page_cost 1.1), one table with an index on (domain, ts), VACUUM ANALYZE ' +
      "after the load; each query by hand (bench/postgres.ts). Time: psql `\\timing` (server round trip, without psql's start-up).",
    "- **Same answer**: every engine's rows are compared with the API's (keys in order, numbers within 0.01), so the peers' SQL is " +
      "checked against the API's semantics on every run.",
    '- **Stored work**: the API (and so its DuckDB twin) reads the relations its importer derives beside the events ' +
      '(docs/STORAGE.md): session fragments for session metrics over whole partitions, pageview and page buckets (with integer ' +
      "visitor keys given at import) for visitors and pageviews without filters, visitor days for the journeys list's ranking. " +
      "The peers' SQL computes everything from the raw rows, as a single events table allows (Plausible keeps a " +
      'sessions table beside its events, the analogue the peers do not have here).',
    '- **Caches**: DuckDB (API and direct) keeps the Parquet bytes it has read in its own buffer pool (docs/DECISIONS.md); ClickHouse and ' +
      'PostgreSQL read through the OS page cache, which this machine empties within a minute or two of idleness, so in rounds where ' +
      "PostgreSQL runs for seconds between their runs they may read from disk again. Each engine's warm-up run precedes its timed rounds.",
    '',
  );
  return out.join('\n');
}

function ratio(v: number): string {
  return Number.isFinite(v) ? `${v >= 10 ? v.toFixed(0) : v.toFixed(2)}x` : '–';
}

function sum(values: number[]): number {
  return values.every((v) => Number.isFinite(v)) ? values.reduce((a, b) => a + b, 0) : NaN;
}

function kb(bytes: number): string {
  return (bytes / 1024).toFixed(0);
}

function sameAnswer(q: QueryFigures): string {
  const checked = Object.entries(q.mismatches);
  if (!checked.length) return '–';
  const differing = checked.filter(([, m]) => m && m.length).map(([e]) => engineLabels[e as EngineName]);
  return differing.length ? `differs: ${differing.join(', ')}` : 'yes';
}

/** The Athena path's times and what a load of the mix costs on AWS, first load and repeat load. */
function athenaSection(f: BenchFigures): string[] {
  const usd = (dollars: number) => (Number.isFinite(dollars) ? `$${dollars.toFixed(3)}` : '–');
  const out = ['## The Athena path on Trino', ''];
  out.push(
    `The API with the Lambdas' Athena engine installed instead of DuckDB (\`ANALYTICS_ENGINE=trino\`): the real Athena SDK, the ` +
      `Athena emulator and ${f.versions.athena ?? 'Trino'} over the same files, in tables created from the stack's Glue definitions, ` +
      "with result reuse and the answer cache off (every run executes, as a first request does). Times include the engine's " +
      'polling (shared/engines/athena-engine.ts, pollWait), which waits 50 ms plus 25 ms per statement of the stack ' +
      'running when it took its query slot, at least 100 ms, between two checks, as on AWS: here the requests run one ' +
      'at a time, so each answer waits up to 100 ms after Trino finished.',
    '',
    "What a request costs on AWS is counted from the request's first timed run (bench/aws-bill.ts; us-east-1 prices): " +
      `Athena at $${AWS_PRICES.athenaPerTiB} per TiB of the bytes each statement read as Trino reports them (\`physicalInputBytes\`, ` +
      "what Athena bills as DataScannedInBytes), at least 10 MB per statement; S3's LIST requests, one per partition a statement " +
      "lists, and GET requests, one per file it opens (Trino's query info; test/cloud/athena-s3-requests.test.ts counts Trino's " +
      "requests on an S3 server against both), plus two PUTs and a GET per page for each statement's result object; the query " +
      `function's duration (the request's time at the server) at ${AWS_PRICES.lambdaPerGbSecond} $ per GB-second on arm64; the ` +
      'DynamoDB capacity the request consumed (dynalite computes it as DynamoDB does); one HTTP API request. A repeat is the ' +
      'same request again once a first load filled the answer cache (docs/API.md, "Cached answers"): it starts no statement. ' +
      "Trino reads a Parquet file below 3 MB whole, in one GET (the Hive connector's `parquet.small-file-threshold`), and counts " +
      "all of it as read: with files of a day's rows below that size, its bytes are whole files'. Whether Athena does the " +
      'same is not documented; "column chunks" is what the same statements read with that threshold at 0 (run again on ' +
      'Trino once per query, session property `hive.parquet_small_file_threshold=0B`): the footers and the column chunks ' +
      'of the row groups not skipped, for a few statements more than the whole files (a file then takes several reads). ' +
      "The bill below counts Trino's bytes as it reads by default; the line under the table counts column chunks.",
    '',
    '| query | p50 | statements | bytes read | column chunks | S3 LIST / GET | DynamoDB RRU / WRU | Athena | S3 | Lambda | other | $ per 1,000 | repeat p50 | repeat $ per 1,000 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  const firsts: Bill[] = [];
  const repeats: Bill[] = [];
  for (const q of f.queries) {
    const cell = q.cells.athena;
    const usage = cell?.usage;
    const bill = usage ? billOf(usage) : undefined;
    const repeatBill = q.repeat?.usage ? billOf(q.repeat.usage) : undefined;
    if (bill) firsts.push(bill);
    if (repeatBill) repeats.push(repeatBill);
    const per1000 = (dollars: number | undefined) => usd((dollars ?? NaN) * 1000);
    out.push(
      `| ${[
        q.query.id,
        cell?.error ? 'error' : formatMs(cell?.p50 ?? NaN),
        usage ? String(usage.statementBytes.length) : '–',
        usage ? mib(sum(usage.statementBytes)) : '–',
        usage?.columnChunkBytes ? mib(sum(usage.columnChunkBytes)) : '–',
        usage ? `${usage.s3Lists} / ${usage.s3Gets}` : '–',
        usage ? `${usage.dynamoReadUnits} / ${usage.dynamoWriteUnits}` : '–',
        per1000(bill?.athena),
        per1000(bill?.s3),
        per1000(bill?.lambda),
        per1000(bill ? bill.apiGateway + bill.dynamo : undefined),
        per1000(bill?.total),
        q.repeat ? formatMs(q.repeat.p50) : '–',
        per1000(repeatBill?.total),
      ].join(' | ')} |`,
    );
  }
  const load = sumBills(firsts);
  const repeatLoad = sumBills(repeats);
  const sumP50 = f.queries.reduce((sum, q) => sum + (q.cells.athena?.p50 ?? NaN), 0);
  const sumRepeat = f.queries.reduce((sum, q) => sum + (q.repeat?.p50 ?? NaN), 0);
  out.push(
    `| **a load of the mix** | ${formatMs(sumP50)} (sum) | | | | | | ${usd(load.athena * 1000)} | ${usd(load.s3 * 1000)} | ` +
      `${usd(load.lambda * 1000)} | ${usd((load.apiGateway + load.dynamo) * 1000)} | **${usd(load.total * 1000)}** | ` +
      `${formatMs(sumRepeat)} (sum) | **${usd(repeatLoad.total * 1000)}** |`,
  );
  const statements = firstUsages(f).reduce((total, u) => total + u.statementBytes.length, 0);
  const chunks = columnChunkLoad(firstUsages(f));
  if (chunks)
    out.push(
      '',
      `Read as column chunks, a first load reads ${mib(chunks.bytes)} and costs ${usd(chunks.bill.total * 1000)} per 1,000 ` +
        `(Athena ${usd(chunks.bill.athena * 1000)}, the 10 MB minimums included; S3 and the rest as above).`,
    );
  out.push(
    '',
    `A first load starts ${statements} statements. On AWS each request runs in a Lambda of its own, so a load's ` +
      "statements run at once: the stack's query slots (`athenaMaxConcurrentQueries`, 20) keep the functions' statements " +
      "within Athena's active-query quota (25 by default) and queue the rest (shared/engines/athena-engine.ts). On this " +
      '2-core machine one Trino runs them, so the table above times the requests one after another, and the load sent ' +
      "at once below measures the machine's two cores, not Athena's capacity.",
  );
  out.push(...loadsAtOnceSection(f));
  out.push(...batchedLoadsSection(f));
  out.push(...trinoTimeSection(f));
  return out;
}

/** Where the Athena path's time goes: Trino's own times for each request's statements, and its costliest operators. */
function trinoTimeSection(f: BenchFigures): string[] {
  const profiled = f.queries.filter((q) => q.cells.athena?.result?.profiles?.length);
  if (!profiled.length) return [];
  const out = [
    '',
    '### Where the time goes on Trino',
    '',
    "Each request's statements in its first timed run, as Trino's query info reports them (`GET /v1/query/{id}`, " +
      "local/trino/trino-query-info.ts): the time from the statement's creation to its end, its planning, and its " +
      'CPU over every thread (two cores: CPU above the elapsed time ran on both); the three operators that took most ' +
      'CPU, each summed over threads, with the rows it took in (a scan: the rows it read from the files). The rest of ' +
      "that run's time is the API around the statement and the engine's polling (above).",
    '',
    '| query | that run | Trino elapsed | planning | CPU | operators with the most CPU |',
    '|---|---:|---:|---:|---:|---|',
  ];
  for (const q of profiled) {
    const profiles = q.cells.athena!.result!.profiles!;
    const operators = profiles
      .flatMap((p) => p.operators)
      .sort((a, b) => b.cpuMs - a.cpuMs)
      .slice(0, 3)
      .map(
        (o) => `${o.type.replace(/Operator$/, '')} ${formatMs(o.cpuMs)} (${o.inputRows.toLocaleString('en-US')} rows)`,
      );
    out.push(
      `| ${[
        q.query.id,
        formatMs(q.cells.athena!.result!.ms),
        formatMs(sum(profiles.map((p) => p.elapsedMs))),
        formatMs(sum(profiles.map((p) => p.planningMs))),
        formatMs(sum(profiles.map((p) => p.cpuMs))),
        operators.join(', '),
      ].join(' | ')} |`,
    );
  }
  return out;
}

/** The mix sent at once on the Athena path: each load's time, answers and bill, and each request's time within it. */
function loadsAtOnceSection(f: BenchFigures): string[] {
  const loads = f.loadsAtOnce ?? [];
  if (!loads.length) return [];
  const out = [
    '',
    '### A load sent at once',
    '',
    `The ${loads[0]!.requests.length} requests of the mix sent together, as a client asking each card in a request of its own sends them (each ` +
      `on a key of its own), ${loads.length} times after the runs above, with result reuse and the answer cache off; ` +
      "each statement under the stack's deadline (25 s, `ATHENA_QUERY_TIMEOUT_MS`). Time is from the first request " +
      "sent to the last answer; the bill counts the load's statements as above, those stopped at the deadline too " +
      '(Athena bills what a cancelled statement scanned; one that failed on its own is not billed and is left out), and ' +
      'the Lambda time of every request, added up.',
    '',
    ...loadTable(loads),
  ];
  out.push('', "| query | alone p50 | in a load at once (median, from the load's start) |", '|---|---:|---:|');
  for (const q of f.queries) {
    const times = loads
      .map((load) => load.requests.find((r) => r.id === q.query.id)?.ms)
      .filter((ms): ms is number => ms !== undefined)
      .sort((a, b) => a - b);
    const median = times.length ? times[Math.floor((times.length - 1) / 2)]! : NaN;
    out.push(`| ${q.query.id} | ${formatMs(q.cells.athena?.p50 ?? NaN)} | ${formatMs(median)} |`);
  }
  return out;
}

/** Each load's time, answers, statements, bytes, S3 requests and bill. */
function loadTable(loads: readonly LoadAtOnce[]): string[] {
  const out = [
    '| load | time | answered 200 | other answers | statements | bytes read | S3 LIST / GET | $ per 1,000 loads |',
    '|---|---:|---:|---|---:|---:|---:|---:|',
  ];
  loads.forEach((load, i) => {
    const others = load.requests.filter((r) => r.status !== 200);
    const bill = billOf(load.usage);
    out.push(
      `| ${[
        i + 1,
        formatMs(load.wallMs),
        `${load.requests.length - others.length} of ${load.requests.length}`,
        others.length ? others.map((r) => `${r.id} ${r.status}`).join(', ') : '–',
        String(load.usage.statementBytes.length),
        mib(sum(load.usage.statementBytes)),
        `${load.usage.s3Lists} / ${load.usage.s3Gets}`,
        `$${(bill.total * 1000).toFixed(3)}`,
      ].join(' | ')} |`,
    );
  });
  return out;
}

/** The mix as the dashboard sends a load: its queries batched, each load's figures as the loads sent at once. */
function batchedLoadsSection(f: BenchFigures): string[] {
  const loads = f.batchedLoads ?? [];
  if (!loads.length) return [];
  const ids = loads[0]!.requests.map((r) => r.id).join(' and ');
  return [
    '',
    '### A load batched, as the dashboard sends it',
    '',
    `The mix as the dashboard sends a load (dashboard/query-batches.ts): its POST /v1/query queries in one POST ` +
      `/v1/query/batch, merged into statements of up to 12 queries (docs/API.md), the other requests alone, all at ` +
      `once (${ids}); ${loads.length} times, result reuse and the answer cache off, billed as above. A merged ` +
      'statement lists each day partition it reads once and pays one 10 MB minimum, and the queries over one range ' +
      'and filters, grouped by attributes, local times or nothing, share one read of each relation (a shared scan, ' +
      'docs/API.md: here totals, top_pages, top_referrers, countries, devices and country_device; revenue, by ' +
      'country as countries is but with revenue rows, runs beside them, as a grouping set holds the groups of ' +
      'every side it reads); on this 2-core machine ' +
      'its branches share the two cores, so its time is about the sum of theirs.',
    '',
    ...loadTable(loads),
  ];
}

/** A load's bytes and bill with each statement's column-chunk bytes; undefined unless every request has them. */
function columnChunkLoad(usages: readonly RequestUsage[]): { bytes: number; bill: Bill } | undefined {
  if (!usages.length || usages.some((u) => !u.columnChunkBytes)) return undefined;
  const asChunks = usages.map((u) => ({ ...u, statementBytes: u.columnChunkBytes! }));
  return {
    bytes: sum(asChunks.map((u) => sum(u.statementBytes))),
    bill: sumBills(asChunks.map(billOf)),
  };
}

function firstUsages(f: BenchFigures): RequestUsage[] {
  return f.queries.flatMap((q) => (q.cells.athena?.usage ? [q.cells.athena.usage] : []));
}

/** The Athena path's rows of the targets table, for a run of the whole mix. */
function athenaTargets(f: BenchFigures): string[] {
  const rows = `${(f.dataset.rows / 1e6).toFixed(f.dataset.rows < 1e6 ? 1 : 0)}M rows`;
  const cells = f.queries.map((q) => ({ id: q.query.id, cell: q.cells.athena, repeat: q.repeat }));
  const slowest = cells.reduce((a, b) => ((b.cell?.p50 ?? Infinity) > (a.cell?.p50 ?? Infinity) ? b : a));
  const slowestP50 = slowest.cell?.p50 ?? NaN;
  const mixSum = cells.reduce((total, c) => total + (c.cell?.p50 ?? NaN), 0);
  const usages = cells.map((c) => c.cell?.usage);
  const bytes = sum(usages.map((u) => (u ? sum(u.statementBytes) : NaN)));
  const dollars = sumBills(usages.map((u) => (u ? billOf(u) : { ...NO_BILL, total: NaN }))).total * 1000;
  const chunks = usages.every((u) => u) ? columnChunkLoad(usages as RequestUsage[]) : undefined;
  const slowRepeat = cells.reduce((a, b) => ((b.repeat?.p50 ?? Infinity) > (a.repeat?.p50 ?? Infinity) ? b : a));
  const repeatP50 = slowRepeat.repeat?.p50 ?? NaN;
  const met = (ok: boolean) => (ok ? 'yes' : 'no');
  return [
    `| ${rows}, Athena path: every request's p50 ≤ 1.5 s | slowest ${slowest.id} ${formatMs(slowestP50)} | ${met(slowestP50 <= ATHENA_TARGET.p50Ms)} |`,
    `| ${rows}, Athena path: the mix's p50s sum to ≤ 6 s | ${formatMs(mixSum)} | ${met(mixSum <= ATHENA_TARGET.mixSumMs)} |`,
    `| ${rows}, Athena path: ≤ 200 MiB read per load | ${(bytes / 2 ** 20).toFixed(1)} MiB${chunks ? `; as column chunks ${(chunks.bytes / 2 ** 20).toFixed(1)} MiB` : ''} | ${met(bytes <= ATHENA_TARGET.bytesPerLoad)}${chunks ? `; as column chunks ${met(chunks.bytes <= ATHENA_TARGET.bytesPerLoad)}` : ''} |`,
    `| ${rows}, Athena path: ≤ $1 per 1,000 loads (first loads) | $${dollars.toFixed(2)}${chunks ? `; as column chunks $${(chunks.bill.total * 1000).toFixed(2)}` : ''} | ${met(dollars <= ATHENA_TARGET.dollarsPer1000Loads)}${chunks ? `; as column chunks ${met(chunks.bill.total * 1000 <= ATHENA_TARGET.dollarsPer1000Loads)}` : ''} |`,
    `| ${rows}, Athena path: a repeat answers from the cache in ≤ 50 ms (p50) | slowest ${slowRepeat.id} ${formatMs(repeatP50)} | ${met(repeatP50 <= ATHENA_TARGET.repeatP50Ms)} |`,
    ...batchedTargets(f, rows),
  ];
}

/** The targets of bytes and cost per load, for the load batched as the dashboard sends it (its median load). */
function batchedTargets(f: BenchFigures, rows: string): string[] {
  const loads = f.batchedLoads ?? [];
  if (!loads.length) return [];
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
  const bytes = median(loads.map((l) => sum(l.usage.statementBytes)));
  const dollars = median(loads.map((l) => billOf(l.usage).total * 1000));
  const wall = median(loads.map((l) => l.wallMs));
  const met = (ok: boolean) => (ok ? 'yes' : 'no');
  const of = `median of ${loads.length} loads`;
  return [
    `| ${rows}, Athena path, a load batched: ≤ 6 s from first request to last answer | ${formatMs(wall)} (${of}) | ${met(wall <= ATHENA_TARGET.mixSumMs)} |`,
    `| ${rows}, Athena path, a load batched: ≤ 200 MiB read | ${(bytes / 2 ** 20).toFixed(1)} MiB (${of}) | ${met(bytes <= ATHENA_TARGET.bytesPerLoad)} |`,
    `| ${rows}, Athena path, a load batched: ≤ $1 per 1,000 loads | $${dollars.toFixed(2)} (${of}) | ${met(dollars <= ATHENA_TARGET.dollarsPer1000Loads)} |`,
  ];
}

const NO_BILL: Bill = { athena: 0, s3: 0, lambda: 0, apiGateway: 0, dynamo: 0, total: 0 };
