// Load test: `npm run load [-- --duration 30 --connections 8 --rows 300000 --keys 400 --warmup 5 --no-write]`.
//
// Starts the local API in this process over its own temporary data folder, fills it with a generated site
// through the real import path (bench/generator.ts -> importLines), then drives a mixed read workload with
// autocannon for a fixed time: query shapes, custom events, journeys and annotation lists. It reports
// throughput, latency percentiles (client side, and per route from the API's own structured `request` log
// lines), every non-2xx answer and error, and the process memory before, at its peak and after. It fails
// (exit code 1) on any error, timeout or non-2xx answer, and when memory grows past the bound below.
// Unless --no-write, the figures replace the `## Load` section at the end of docs/BENCHMARKS.md.
//
// The rate limit (100 requests per minute per key, counted in DynamoDB) is kept, not bypassed: the script creates
// --keys project keys for the site and every request takes the next key in turn, so each key sees
// requests / keys calls, far under 100 per minute window. The limiter's DynamoDB round trip stays in every
// request, as in production.

import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import autocannon from 'autocannon';
import { startLocalApi } from '../local/server/local-api.js';
import { importLines } from '../local/store/local-destination.js';
import { logger } from '../shared/log.js';
import { createCredential } from '../shared/services/credentials.js';
import { generateEventLines } from './generator.js';

// ---- settings ------------------------------------------------------------------------------------------------

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at === -1) return fallback;
  const value = Number(process.argv[at + 1]);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} needs a positive number`);
  return value;
}

const settings = {
  duration: flag('duration', 30),
  warmup: flag('warmup', 5),
  connections: flag('connections', 8),
  rows: flag('rows', 300_000),
  keys: flag('keys', 400),
  write: !process.argv.includes('--no-write'),
};
const DOMAIN = 'load.example';
/** Retained memory may grow this much over the timed run (after a full GC, against the same after warm-up). */
const MEMORY_BOUND = { mib: 64, ratio: 0.15 };
const command = `npm run load${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;

// The API's own INFO lines (one `query` line per engine query, one `request` line per request) are what it
// logs in production; they are kept on, collected here for the per-route figures, and kept off the terminal.
logger.setLogLevel('INFO');
const serverLines: { route: string; status: number; ms: number }[] = [];
const serverProblems: string[] = [];
for (const stream of [process.stdout, process.stderr]) {
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (!text.startsWith('{"level"')) return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    for (const line of text.split('\n').filter(Boolean)) {
      const entry = JSON.parse(line) as {
        level: string;
        message: string;
        route: string;
        status: number;
        duration_ms: number;
      };
      if (entry.message === 'request')
        serverLines.push({ route: entry.route, status: entry.status, ms: entry.duration_ms });
      if (entry.level !== 'INFO' && entry.level !== 'DEBUG') serverProblems.push(line.slice(0, 300));
    }
    return true;
  }) as typeof stream.write;
}

/** autocannon stops its clients at the deadline; the requests the server is still serving finish meanwhile. */
async function settle(): Promise<void> {
  let seen = -1;
  while (seen !== serverLines.length) {
    seen = serverLines.length;
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MiB = 1024 * 1024;

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// ---- data, server and keys ---------------------------------------------------------------------------------------

const dataDir = mkdtempSync(join(tmpdir(), 'analytics-load-'));
const today = new Date().toISOString().slice(0, 10);
const loadAtStart = loadavg()[0]!;
log(`data folder ${dataDir}`);
const api = await startLocalApi({ dataDir });

const importStarted = performance.now();
const report = await importLines(
  generateEventLines({ seed: 7, rows: settings.rows, endDate: today, days: 90, domain: DOMAIN }),
  api.paths,
);
const importSeconds = (performance.now() - importStarted) / 1000;
if (report.rejected.length) throw new Error(`generator lines rejected: ${JSON.stringify(report.rejected.slice(0, 3))}`);
const parquet = listParquet(api.paths.eventsDir);
log(
  `imported ${report.rowsWritten.toLocaleString('en-US')} rows in ${importSeconds.toFixed(1)} s: ${parquet.files} Parquet files, ${(parquet.bytes / MiB).toFixed(1)} MiB`,
);

const keys: string[] = [];
for (let i = 0; i < settings.keys; i++)
  keys.push((await createCredential({ domains: [DOMAIN], owner: 'user_load' })).token);

// Visitors to ask the per-visitor endpoints about: the busiest of the last 30 days, found through the API.
const busiest = await fetch(`${api.url}/v1/journeys/list`, {
  method: 'POST',
  headers: { authorization: `Bearer ${keys[0]}`, 'content-type': 'application/json' },
  body: JSON.stringify({ domain: DOMAIN, date_range: '30d', sort_by: 'pageviews', limit: 40 }),
});
const visitors = ((await busiest.json()) as { data: { visitor_id: string }[] }).data.map((v) => v.visitor_id);
if (visitors.length === 0) throw new Error('the generated site has no visitors in the last 30 days');
for (let i = 0; i < 20; i++) {
  const res = await fetch(`${api.url}/v1/annotations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys[i % keys.length]}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain: DOMAIN, date: addDays(today, -3 * i), title: `Release ${i}` }),
  });
  if (res.status !== 201) throw new Error(`seeding annotations answered ${res.status}`);
}

// ---- the workload ------------------------------------------------------------------------------------------------

interface Shape {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: () => unknown;
}

const post = (name: string, path: string, body: () => unknown): Shape => ({ name, method: 'POST', path, body });
const get = (name: string, path: string): Shape => ({ name, method: 'GET', path });
let visitorTurn = 0;
const nextVisitor = () => visitors[visitorTurn++ % visitors.length]!;

// Interleaved so that the heavier shapes are spread over the cycle each connection walks.
const shapes: Shape[] = [
  post('query totals 30d', '/v1/query', () => ({
    metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'],
    date_range: '30d',
  })),
  get('events list 30d', '/v1/events?period=30d'),
  post('journeys timeline', '/v1/journeys/timeline', () => ({
    domain: DOMAIN,
    visitor_id: nextVisitor(),
    date_range: '30d',
  })),
  post('query top pages 30d', '/v1/query', () => ({
    metrics: ['visitors', 'pageviews'],
    dimensions: ['page'],
    date_range: '30d',
    limit: 10,
  })),
  get('annotations list', `/v1/annotations?domain=${DOMAIN}`),
  post('query referrers 7d', '/v1/query', () => ({
    metrics: ['visitors', 'bounce_rate'],
    dimensions: ['referrer'],
    date_range: '7d',
    limit: 10,
  })),
  post('journeys stats', '/v1/journeys/stats', () => ({ domain: DOMAIN, visitor_id: nextVisitor() })),
  get('event properties', '/v1/events/signup/properties?period=30d'),
  post('query daily 90d New York', '/v1/query', () => ({
    metrics: ['visitors', 'pageviews'],
    dimensions: ['date'],
    date_range: '90d',
    timezone: 'America/New_York',
  })),
  post('journeys activity', '/v1/journeys/activity', () => ({ domain: DOMAIN, visitor_id: nextVisitor() })),
  post('query country x device 30d', '/v1/query', () => ({
    metrics: ['visitors'],
    dimensions: ['country', 'device'],
    date_range: '30d',
    limit: 20,
  })),
  get(
    'annotations list, bounded',
    `/v1/annotations?domain=${DOMAIN}&start_date=${addDays(today, -30)}&end_date=${today}`,
  ),
  post('journeys list 30d', '/v1/journeys/list', () => ({ domain: DOMAIN, date_range: '30d', limit: 50 })),
  post('query hourly 7d Kolkata', '/v1/query', () => ({
    metrics: ['pageviews'],
    dimensions: ['hour'],
    date_range: '7d',
    timezone: 'Asia/Kolkata',
  })),
  get('property values + revenue', '/v1/events/signup/properties/plan?period=30d&include_revenue=true'),
  post('query by event 30d', '/v1/query', () => ({
    metrics: ['visitors', 'conversions'],
    dimensions: ['event'],
    date_range: '30d',
    include_revenue: true,
  })),
  post('query page filter', '/v1/query', () => ({
    metrics: ['visitors'],
    dimensions: ['referrer'],
    filters: [['page', 'is', '/pricing']],
    date_range: '30d',
    limit: 10,
  })),
  post('journeys list by revenue', '/v1/journeys/list', () => ({
    domain: DOMAIN,
    date_range: '30d',
    has_revenue: true,
    sort_by: 'revenue',
    limit: 20,
  })),
  post('query property filter', '/v1/query', () => ({
    metrics: ['visitors', 'pageviews'],
    dimensions: ['page'],
    filters: [['event_property', 'is', 'plan:pro']],
    date_range: '30d',
    limit: 10,
  })),
  post('query revenue by source', '/v1/query', () => ({
    metrics: ['revenue', 'conversions', 'conversion_rate'],
    dimensions: ['utm_source'],
    date_range: '30d',
    include_revenue: true,
    sort: { field: 'revenue' },
  })),
];

let keyTurn = 0;
const outcomes = new Map<string, Map<number, number>>();
const failures: string[] = [];

function requestsOf(): autocannon.Request[] {
  return shapes.map((shape) => ({
    method: shape.method,
    path: shape.path,
    setupRequest: (request: autocannon.Request) => ({
      ...request,
      headers: {
        authorization: `Bearer ${keys[keyTurn++ % keys.length]}`,
        ...(shape.body ? { 'content-type': 'application/json' } : {}),
      },
      ...(shape.body ? { body: JSON.stringify(shape.body()) } : {}),
    }),
    onResponse: (status: number, body: string) => {
      const byStatus = outcomes.get(shape.name) ?? new Map<number, number>();
      byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
      outcomes.set(shape.name, byStatus);
      if ((status < 200 || status > 299) && failures.length < 10)
        failures.push(`${shape.name}: ${status} ${body.slice(0, 200)}`);
    },
  }));
}

function run(seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: api.url, connections: settings.connections, duration: seconds, timeout: 30, requests: requestsOf() },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

// ---- run -----------------------------------------------------------------------------------------------------------

log(`warm-up ${settings.warmup} s with ${settings.connections} connections ...`);
await run(settings.warmup);
await settle();
outcomes.clear();
failures.length = 0;
serverLines.length = 0;
serverProblems.length = 0;

gc();
const before = process.memoryUsage();
let peakRss = before.rss;
let peakHeap = before.heapUsed;
const sampler = setInterval(() => {
  const now = process.memoryUsage();
  peakRss = Math.max(peakRss, now.rss);
  peakHeap = Math.max(peakHeap, now.heapUsed);
}, 200);

log(`timed run ${settings.duration} s ...`);
const result = await run(settings.duration);
await settle();
clearInterval(sampler);
gc();
const after = process.memoryUsage();
const loadAtEnd = loadavg()[0]!;

// ---- report --------------------------------------------------------------------------------------------------------

const growth = after.rss - before.rss;
const allowed = Math.max(MEMORY_BOUND.mib * MiB, before.rss * MEMORY_BOUND.ratio);
const non2xx = result.non2xx;
const ok =
  result.errors === 0 && result.timeouts === 0 && non2xx === 0 && serverProblems.length === 0 && growth <= allowed;

const perRoute = [...groupBy(serverLines, (l) => l.route)].map(([route, lines]) => {
  const ms = lines.map((l) => l.ms).sort((a, b) => a - b);
  return { route, count: lines.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms.at(-1)! };
});
perRoute.sort((a, b) => b.count - a.count);

const lines: string[] = [
  '## Load',
  '',
  `Written by \`${command}\` (bench/load.ts) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC. One process: the local API`,
  '(the Lambda handlers behind the local HTTP server, dynalite, DuckDB) and autocannon driving it over loopback HTTP.',
  `${settings.connections} connections keep both cores saturated, so latencies here are mostly queueing behind other requests;`,
  'the dashboard mix above times queries one at a time. On Lambda each request has its own instance and Athena does the scan.',
  '',
  '| | |',
  '|---|---|',
  `| machine | ${cpus().length} cores (${cpus()[0]?.model.trim()}), ` +
    `${(totalmem() / 1024 ** 3).toFixed(0)} GiB memory, Node ${process.versions.node}, ` +
    `DUCKDB_THREADS=${process.env.DUCKDB_THREADS ?? 2} |`,
  `| load average (1 min) | ${loadAtStart.toFixed(2)} at the start, ${loadAtEnd.toFixed(2)} at the end (other work on the machine shows here) |`,
  `| data set | ${report.rowsWritten.toLocaleString('en-US')} generated events (bench/generator.ts, ` +
    `seed 7), one site, 90 days to ${today}, imported through importLines in ${importSeconds.toFixed(0)} ` +
    `s: ${parquet.files} Parquet files, ${(parquet.bytes / MiB).toFixed(1)} MiB |`,
  `| workload | ${shapes.length} read shapes in turn per connection (${countShapes('/v1/query')} ` +
    `query, ${countShapes('/v1/events')} events, ${countShapes('/v1/journeys')} journeys, ` +
    `${countShapes('/v1/annotations')} annotations list), ${settings.connections} connections, ` +
    `${settings.warmup} s warm-up then ${settings.duration} s timed |`,
  `| rate limit | kept on: ${settings.keys} project keys, each request takes the next, so no key was ` +
    `used more than ${plural(Math.ceil(keyTurn / settings.keys), 'time')} over warm-up and run (limit ` +
    `100 per minute) |`,
  '',
  '| requests | throughput | latency p50 | p99 | max | 2xx | non-2xx | errors | timeouts |',
  '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  `| ${result.requests.total.toLocaleString('en-US')} | ${result.requests.average.toFixed(1)} req/s | ` +
    `${result.latency.p50} ms | ${result.latency.p99} ms | ${result.latency.max} ms | ${result['2xx']} | ` +
    `${non2xx} | ${result.errors} | ${result.timeouts} |`,
  '',
  "Per route, from the API's own `request` log lines (handler time: authentication, limits, validation, engine):",
  '',
  '| route | requests | p50 | p99 | max |',
  '|---|---:|---:|---:|---:|',
  ...perRoute.map((r) => `| ${r.route} | ${r.count} | ${r.p50} ms | ${r.p99} ms | ${r.max} ms |`),
  '',
  'Memory of the whole process (API, DuckDB, dynalite and autocannon), after a full GC before and after the timed run:',
  '',
  '| | RSS | JS heap used |',
  '|---|---:|---:|',
  `| before (after warm-up) | ${mib(before.rss)} | ${mib(before.heapUsed)} |`,
  `| peak during the run | ${mib(peakRss)} | ${mib(peakHeap)} |`,
  `| after | ${mib(after.rss)} | ${mib(after.heapUsed)} |`,
  `| growth | ${signedMib(growth)} | ${signedMib(after.heapUsed - before.heapUsed)} |`,
  '',
  `Bound: RSS after the timed run at most max(${MEMORY_BOUND.mib} MiB, ${MEMORY_BOUND.ratio * 100}% of ` +
    `RSS before) above RSS before, i.e. ${mib(allowed)} here: ${growth <= allowed ? 'held' : 'EXCEEDED'}.`,
  `Server log lines above INFO during the timed run: ${serverProblems.length}.`,
  `Outcome: ${ok ? 'passed' : 'FAILED'} (the script exits 1 on any error, timeout, non-2xx answer, warning or error logged by the API, or memory past the bound).`,
];
if (serverProblems.length)
  lines.push(
    '',
    'First warnings and errors logged by the API:',
    '',
    ...serverProblems.slice(0, 5).map((l) => `- \`${l}\``),
  );
if (failures.length) lines.push('', 'First non-2xx answers:', '', ...failures.map((f) => `- ${f}`));

const section = lines.join('\n');
log('');
log(section);
for (const [shape, byStatus] of outcomes) log(`  ${shape}: ${[...byStatus].map(([s, n]) => `${n}x${s}`).join(', ')}`);

if (settings.write) {
  const file = join(import.meta.dirname, '..', 'docs', 'BENCHMARKS.md');
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // no file yet: it starts with this section
  }
  const at = current.search(/^## Load$/m);
  const kept = (at === -1 ? current : current.slice(0, at)).trimEnd();
  writeFileSync(file, `${kept ? `${kept}\n\n` : ''}${section}\n`);
  log(`\nwrote the Load section of ${file}`);
}

await api.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);

// ---- helpers ---------------------------------------------------------------------------------------------------------

function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function listParquet(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.parquet')) continue;
    files += 1;
    bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return { files, bytes };
}

function countShapes(prefix: string): number {
  return shapes.filter((s) => s.path.startsWith(prefix)).length;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const group = out.get(key(item));
    if (group) group.push(item);
    else out.set(key(item), [item]);
  }
  return out;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function mib(bytes: number): string {
  return `${(bytes / MiB).toFixed(0)} MiB`;
}

function signedMib(bytes: number): string {
  return `${bytes >= 0 ? '+' : '-'}${mib(Math.abs(bytes))}`;
}
