// `npm run bench:ingest [-- --rows 200000 --days 3]`: the ingest function's figures on this machine, for the
// choice of how the store's writers write Parquet (docs/DEPLOY.md, "Feeding the stack"). One gzip NDJSON object of
// the bench generator's events, put under incoming/ on moto's S3 server and announced through its SQS queue, is
// handed to the ingest handler in this process with DuckDB's bindings for this machine (x64; Lambda runs arm64).
// Printed: the handler module's load time, one ingest's time and events per second, the process's peak RSS, and the
// objects written. Usage and file states go to a dynalite started here.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { generateEventLines } from './generator.js';
import { startMoto } from '../local/tools/moto-server.js';
import { ingestBucket } from '../test/support/ingest-bucket.js';
import { keysOf } from '../test/support/s3-keys.js';
import { startTestApi } from '../test/support/test-api.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, days: { type: 'string', default: '3' } } });
const rows = Number(values.rows);
const days = Number(values.days);

const loadStarted = performance.now();
const { ingestHandler } = await import('../functions/ingest-events.js');
const loadMs = performance.now() - loadStarted;

const moto = await startMoto();
const api = await startTestApi();
try {
  const target = await ingestBucket(moto, 'bench-ingest');
  const lines: string[] = [];
  for await (const line of generateEventLines({ seed: 7, rows, endDate: '2026-11-20', days, domain: 'ingest.bench.example' })) lines.push(line);
  const body = gzipSync(lines.join('\n'));
  await target.put('incoming/firehose-batch.gz', body);
  const work = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  const handle = ingestHandler(target.s3, work);
  const records = (await target.receive()).filter((r) => r.body.includes('ObjectCreated'));
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  const result = await handle({ Records: records });
  const ms = performance.now() - started;
  clearInterval(sampler);
  if (result.batchItemFailures.length) throw new Error('the ingest failed');
  const written = (await keysOf(target.s3, target.bucket)).filter((k) => /^[a-z]+\/domain=/.test(k));
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  console.log(`rows ${rows} over ${days} days; object ${mib(body.length)} gzip (${mib(Buffer.byteLength(lines.join('\n')))} NDJSON)`);
  console.log(`handler module load: ${loadMs.toFixed(0)} ms`);
  console.log(`ingest: ${(ms / 1000).toFixed(2)} s, ${Math.round(rows / (ms / 1000))} events/s, ${written.length} files written`);
  console.log(`process RSS: ${mib(rssBefore)} before, ${mib(peak)} peak`);
} finally {
  await api.close();
  await moto.stop();
}
