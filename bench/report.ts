import type { Dataset } from './dataset.js';
import { athenaDollars, type ScanFacts, type StoredRelation } from './duckdb-twin.js';
import type { BundleFigures } from './lambda.js';
import { formatMs } from './chart.js';
import type { Cell, TimingOptions } from './measure.js';
import { mixIds, type MixQuery } from './query-mix.js';
import type { BenchEngine } from './results.js';

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
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
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
      '100M events, `--repeat`, `--warmup`, `--budget SECONDS`, `--only ID,ID`, `--no-lambda`, `--no-write`. The generated data set ' +
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

  if (ran.includes('athena')) {
    out.push('## The Athena path on Trino', '');
    out.push(
      `The API with the Lambdas' Athena engine installed instead of DuckDB (\`ANALYTICS_ENGINE=trino\`): the real Athena SDK, the ` +
        `Athena emulator and ${f.versions.athena ?? 'Trino'} over the same files, in tables created from the stack's Glue definitions, ` +
        "with result reuse and the answer cache off (every run executes, as a first request does). Times include the engine's " +
        'polling, which checks 100 ms after the start, then after 200, 400 and 800 ms, then every second, as on AWS: times fall ' +
        'on about 0.3, 0.7, 1.5, 2.5, 3.5 s, each answer waiting for the first check after Trino finished (a shorter poll would answer ' +
        "sooner for more GetQueryExecution calls, which count against Athena's per-account API quotas). " +
        'Bytes are what Trino reports it read from the files (`physicalInputBytes`, the figure Athena bills as DataScannedInBytes) for ' +
        'the statements of one request; billing counts at least 10 MB per statement, at $5 per TB (2^40 bytes). A statement that reads a ' +
        'relation twice (a CTE referenced twice, a self-join) is billed for both reads. The local files are in the codec of Machine and ' +
        'data; ZSTD files on S3 are smaller, so S3 bills less than these bytes suggest.',
      '',
    );
    out.push(
      '| query | p50 | bytes read | billed (≥ 10 MB per statement) | $ per 1,000 loads |',
      '|---|---:|---:|---:|---:|',
    );
    let total = 0;
    for (const q of f.queries) {
      const cell = q.cells.athena;
      const bytes = cell?.bytes ?? NaN;
      // One statement per request in the mix; the 10 MB minimum applies to each.
      const billed = Math.max(bytes, 10 * 1000 ** 2);
      const dollars = (billed / 2 ** 40) * 5 * 1000;
      if (Number.isFinite(bytes)) total += dollars;
      out.push(
        `| ${q.query.id} | ${cell?.error ? 'error' : formatMs(cell?.p50 ?? NaN)} | ${mib(bytes)} | ${mib(billed)} | ${Number.isFinite(bytes) ? dollars.toFixed(3) : '–'} |`,
      );
    }
    out.push(`| **1,000 loads of the whole mix** | | | | **${total.toFixed(3)}** |`, '');
  }

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
        'those of the local files in their codecs (Machine and data: Snappy and ZSTD by relation); the files `import --s3` writes are ' +
        'all ZSTD and smaller, so for S3 these figures are too high; "What Athena would scan" below has them for a ZSTD copy.',
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
