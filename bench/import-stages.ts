// `npm run bench:import [-- --rows 1000000 --batch-rows N --check-workers N --import-only --chunks N]`: where an import's time goes (docs/STORAGE.md, "Import: where the time
// goes"). The bench generator's NDJSON (cached in .bench/import/) is read four ways: lines only; lines and
// JSON.parse; lines and the importer's checks; and a whole import into a fresh store, timed by stage (read and check
// including the staged files of each partition, writing the partitions and their derived files, publishing), with peak RSS.
// With `--chunks N` the file is imported N times into the same store, each time after the first as a copy whose
// visitor, session and transaction ids are renamed (so N times the visitors on the same days: a site N times the
// size), to show whether the throughput holds as the store grows; each copy is written beside the file and removed.
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { generateEventLines } from './generator.js';
import { importNdjson } from '../local/store/local-destination.js';
import { readLines } from '../writer/ndjson-lines.js';
import { localPaths } from '../local/store/paths.js';
import { parquetFilesUnder } from '../writer/parquet-files.js';
import { checkEventLine } from '../shared/events/event-validation.js';
import { startTestApi } from '../test/support/test-api.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    'batch-rows': { type: 'string' },
    'check-workers': { type: 'string' },
    'import-only': { type: 'boolean', default: false },
    chunks: { type: 'string', default: '1' },
  },
});
const rows = Number(values.rows);
const dir = new URL('../.bench/import/', import.meta.url).pathname;
const file = join(dir, `events-seed3-${rows}.ndjson`);
if (!existsSync(file)) {
  mkdirSync(dir, { recursive: true });
  await writeLines(
    `${file}.tmp`,
    generateEventLines({ seed: 3, rows, endDate: '2026-11-20', days: 30, domain: 'import.bench.example' }),
  );
  renameSync(`${file}.tmp`, file);
}
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
console.log(`${rows} events, ${(statSync(file).size / 1e6).toFixed(0)} MB of NDJSON over 30 days`);

const timed = async (label: string, pass: (line: string) => void) => {
  const started = performance.now();
  for await (const line of readLines(file)) if (typeof line === 'string') pass(line);
  console.log(`${label.padEnd(28)} ${seconds(performance.now() - started)}`);
};
if (!values['import-only']) await timed('read lines', () => {});
if (!values['import-only']) await timed('read lines, JSON.parse', (line) => JSON.parse(line));
if (!values['import-only']) await timed('read lines, check events', (line) => checkEventLine(line));

const storeDir = mkdtempSync(join(tmpdir(), 'bench-import-'));
const api = await startTestApi();
try {
  const paths = localPaths(storeDir);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  const tuning = {
    ...(values['batch-rows'] ? { batchRows: Number(values['batch-rows']) } : {}),
    ...(values['check-workers'] ? { checkWorkers: Number(values['check-workers']) } : {}),
  };
  let stagePeak = 0;
  // CPU time of the whole process per stage, every thread (the check workers', DuckDB's) counted.
  let cpuBefore = process.cpuUsage();
  const cpuSeconds = () => {
    const used = process.cpuUsage(cpuBefore);
    cpuBefore = process.cpuUsage();
    return (used.user + used.system) / 1e6;
  };
  const chunks = Number(values.chunks);
  let rowsWritten = 0;
  for (let chunk = 0; chunk < chunks; chunk++) {
    const input = chunk === 0 ? file : await renamedCopy(file, chunk);
    const chunkStarted = performance.now();
    const stageSampler = setInterval(() => (stagePeak = Math.max(stagePeak, process.memoryUsage().rss)), 50);
    cpuSeconds();
    const label = chunks > 1 ? `import ${chunk + 1}/${chunks}` : 'import';
    const report = await importNdjson(input, paths, {
      ...tuning,
      onStage: (stage, ms) => {
        if (stage === 'read and check')
          console.log(
            `${label}: ${'digest'.padEnd(20)} ${seconds(performance.now() - chunkStarted - ms)} (before the stages: the input's SHA-256)`,
          );
        console.log(
          `${label}: ${stage.padEnd(20)} ${seconds(ms)}, CPU ${cpuSeconds().toFixed(1)} s, peak RSS ${(stagePeak / 2 ** 20).toFixed(0)} MiB`,
        );
        stagePeak = 0;
      },
    });
    clearInterval(stageSampler);
    if (input !== file) rmSync(input);
    rowsWritten += report.rowsWritten;
    const chunkMs = performance.now() - chunkStarted;
    console.log(
      `${label}: ${report.rowsWritten} rows in ${seconds(chunkMs)}, ` +
        `${Math.round(report.rowsWritten / (chunkMs / 1000))} events/s; store ` +
        `${(storeBytes(dirname(paths.eventsDir)) / 2 ** 30).toFixed(2)} GiB`,
    );
  }
  const ms = performance.now() - started;
  clearInterval(sampler);
  console.log(
    `import: ${rowsWritten} rows in ${seconds(ms)}, ${Math.round(rowsWritten / (ms / 1000))} events/s, peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB`,
  );
} finally {
  await api.close();
  rmSync(storeDir, { recursive: true, force: true });
}

/** A copy of `source` beside it with chunk `k`'s own visitor, session and transaction ids (`v_` becomes `v<k>_`, and so on). */
async function renamedCopy(source: string, k: number): Promise<string> {
  const target = `${source}.chunk${k}`;
  const ids = /"(visitor_id|session_id|transaction_id)":"(v|s|txn)_/g;
  async function* renamed() {
    for await (const line of readLines(source)) {
      if (typeof line === 'string')
        yield line.replace(ids, (_, field: string, prefix: string) => `"${field}":"${prefix}${k}_`);
    }
  }
  await writeLines(target, renamed());
  return target;
}

/** Writes `lines` to `file`, one per line, waiting whenever the stream's buffer is full. */
async function writeLines(file: string, lines: AsyncIterable<string>): Promise<void> {
  const out = createWriteStream(file);
  for await (const line of lines) {
    if (!out.write(`${line}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(() => resolve()));
}

/** Bytes of the Parquet files under a folder (the store's current snapshot). */
function storeBytes(dir: string): number {
  return parquetFilesUnder(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}
