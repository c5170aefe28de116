import './env.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiEngine } from './api.js';
import { ensureDataset, rowCount } from './dataset.js';
import { DuckDbTwin } from './duckdb-twin.js';
import { namedShape } from './generator.js';
import { measureQuery } from './measure.js';
import { dashboardMix } from './query-mix.js';
import { differences } from './results.js';

// `npm run bench:shapes`: the dashboard mix through the API on data sets of different shapes (bench/generator.ts,
// `namedShape`), against the baseline of plain SQL over the raw event rows in DuckDB on the same files (the
// statements the planner writes with every derived relation off). Checks the targets of docs/BENCHMARKS.md
// "Data shapes": no query's p50 above 500 ms, the mix's p50 sum at most a quarter of the baseline's, and the same
// answers. Writes that section of docs/BENCHMARKS.md (with --no-write: prints it only).
//   npm run bench:shapes -- [--rows 10M] [--shapes default,wide] [--repeat 5] [--no-write]

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    shapes: { type: 'string', default: 'default,wide' },
    repeat: { type: 'string', default: '5' },
    'no-write': { type: 'boolean', default: false },
  },
});
const rows = rowCount(flags.rows!);
const projectRoot = resolve(import.meta.dirname, '..');
const log = (line: string) => console.error(line);
const TARGET_P50_MS = 500;
const TARGET_SHARE = 0.25;
const timing = { warmup: 1, repeat: Number(flags.repeat), minRuns: 3, budgetMs: 60_000 };

const loadSamples: number[] = [];
const sampler = setInterval(() => loadSamples.push(loadavg()[0]!), 5_000);
const startedAt = new Date();
const sections: string[] = [];
let allMet = true;
for (const name of flags.shapes!.split(',')) {
  const shape = namedShape(name, rows);
  const spec = {
    seed: 42,
    rows,
    endDate: '2026-11-20',
    days: 90,
    domain: 'shop.bench.example',
    ...(name === 'default' ? {} : { shape }),
  };
  const dataset = await ensureDataset(spec, join(projectRoot, '.bench', 'data'), log);
  const twin = await DuckDbTwin.open(dataset);
  const [api] = await ApiEngine.start(dataset, { trino: false });
  const raw = twin.rawRows();
  const lines: string[] = [];
  let apiSum = 0;
  let rawSum = 0;
  let worst = 0;
  let same = true;
  try {
    const stats = await twin.shapeStats();
    lines.push(
      `### Shape \`${name}\``,
      '',
      `${stats.rows.toLocaleString('en-US')} events over 90 days: ${stats.pages} distinct pages, ${stats.sessions.toLocaleString('en-US')} sessions ` +
        `(${(stats.rows / stats.sessions).toFixed(1)} events each), ${stats.visitors.toLocaleString('en-US')} visitors ` +
        `(${(stats.sessions / stats.visitors).toFixed(2)} sessions each). Generator shape: \`${JSON.stringify(shape)}\`. ` +
        `Files: ${(await twin.storage()).map((r) => `${r.folder} ${r.codecs.join('+')}`).join(', ')}.`,
      '',
      '| query | API p50 | raw rows p50 | API / raw | same answer |',
      '|---|---:|---:|---:|---|',
    );
    for (const query of dashboardMix(spec.domain, spec.endDate)) {
      const cells = await measureQuery([api!, raw], query, timing);
      const [a, r] = [cells.get(api!)!, cells.get(raw)!];
      const diff = a.result && r.result ? differences(a.result, r.result) : [a.error ?? r.error ?? 'no answer'];
      same &&= diff.length === 0;
      apiSum += a.p50;
      rawSum += r.p50;
      worst = Math.max(worst, a.p50);
      lines.push(
        `| ${query.id} | ${a.p50.toFixed(0)} ms | ${r.p50.toFixed(0)} ms | ${(a.p50 / r.p50).toFixed(2)} | ${diff.length ? `no: ${diff[0]}` : 'yes'} |`,
      );
      log(
        `${name} ${query.id.padEnd(16)} api ${a.p50.toFixed(0)} ms (engine ${a.engineP50?.toFixed(0) ?? '?'} ms)  raw ${r.p50.toFixed(0)} ms${diff.length ? `  DIFFERENT: ${diff[0]}` : ''}`,
      );
    }
  } finally {
    await api!.close();
    twin.close();
  }
  const share = apiSum / rawSum;
  const met = worst <= TARGET_P50_MS && share <= TARGET_SHARE && same;
  allMet &&= met;
  lines.push(
    `| **sum** | **${apiSum.toFixed(0)} ms** | **${rawSum.toFixed(0)} ms** | **${share.toFixed(2)}** | ${same ? 'all' : 'NOT ALL'} |`,
    '',
    `Slowest p50 ${worst.toFixed(0)} ms (target ≤ ${TARGET_P50_MS} ms: ${worst <= TARGET_P50_MS ? 'met' : 'not met'}); sum of p50 ` +
      `${(share * 100).toFixed(0)}% of the raw rows' (target ≤ ${TARGET_SHARE * 100}%: ${share <= TARGET_SHARE ? 'met' : 'not met'}).`,
    '',
  );
  sections.push(lines.join('\n'));
}
clearInterval(sampler);

const load = loadSamples.length ? loadSamples : [loadavg()[0]!];
const section = [
  '## Data shapes',
  '',
  `Written by \`npm run bench:shapes${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}\` (bench/shapes.ts) on ` +
    `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${cpus().length} cores, load average ${Math.min(...load).toFixed(1)}-${Math.max(...load).toFixed(1)} ` +
    `during the run. Each query: one warm-up, then ${timing.repeat} rounds alternating the API over HTTP (the local server, keys, counters) and ` +
    'plain SQL over the raw event rows in DuckDB on the same files (the statements the planner writes with every derived relation ' +
    'off: no session fragments, buckets of any kind, visitor days or keys). Answers compared row by row.',
  '',
  ...sections,
].join('\n');
console.log(section);
if (!flags['no-write']) {
  const file = join(projectRoot, 'docs', 'BENCHMARKS.md');
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n';
  const parts = existing.split(/^(?=## )/m);
  const at = parts.findIndex((part) => part.startsWith('## Data shapes\n'));
  if (at >= 0) parts[at] = `${section.trimEnd()}\n\n`;
  else parts.push(`${section.trimEnd()}\n`);
  writeFileSync(file, parts.join(''));
  log(`wrote the "Data shapes" section of ${file}`);
}
process.exitCode = allMet ? 0 : 1;
