// `npm run bench:ingest [-- --rows 200000 --days 3 --objects 1]`: the store writers' figures on this machine, for
// the choice of how they write Parquet and for what upkeep costs (docs/DEPLOY.md, "Feeding the stack"). The bench
// generator's events, as `objects` gzip NDJSON objects put under incoming/ on moto's S3 server and announced through
// its SQS queue, are handed to the ingest handler in this process with DuckDB's bindings for this machine (x64;
// Lambda runs arm64). Printed: the handler module's load time, the ingests' time and events per second, the
// process's peak RSS, the files written; with 8 objects or more, one upkeep run compacting the partitions they
// crowded. Usage and file states go to a dynalite started here.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { generateEventLines } from './generator.js';
import { upkeepStore } from '../ingest/s3-upkeep.js';
import { startMoto } from '../local/tools/moto-server.js';
import { ingestBucket } from '../test/support/ingest-bucket.js';
import { keysOf } from '../test/support/s3-keys.js';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { localPaths } from '../local/store/paths.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    days: { type: 'string', default: '3' },
    objects: { type: 'string', default: '1' },
  },
});
const rows = Number(values.rows);
const days = Number(values.days);
const objects = Number(values.objects);

const loadStarted = performance.now();
const { ingestHandler } = await import('../functions/ingest-events.js');
const loadMs = performance.now() - loadStarted;

const moto = await startMoto();
// Usage and file states in a DynamoDB of a fresh data folder (the test API's support needs vitest's runner).
const dynamo = await openLocalDynamo(localPaths(mkdtempSync(join(tmpdir(), 'bench-dynamo-'))), { publish: false });
try {
  const target = await ingestBucket(moto, 'bench-ingest');
  const lines: string[] = [];
  for await (const line of generateEventLines({
    seed: 7,
    rows,
    endDate: '2026-11-20',
    days,
    domain: 'ingest.bench.example',
  }))
    lines.push(line);
  let gzipBytes = 0;
  for (let i = 0; i < objects; i++) {
    const body = gzipSync(lines.filter((_, j) => j % objects === i).join('\n'));
    gzipBytes += body.length;
    await target.put(`incoming/firehose-batch-${i}.gz`, body);
  }
  const work = mkdtempSync(join(tmpdir(), 'bench-ingest-'));
  const handle = ingestHandler(target.s3, work);
  const records = (await target.receive()).filter((r) => r.body.includes('ObjectCreated'));
  const rssBefore = process.memoryUsage().rss;
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  for (const record of records) {
    const result = await handle({ Records: [record] });
    if (result.batchItemFailures.length) throw new Error('the ingest failed');
  }
  const ms = performance.now() - started;
  clearInterval(sampler);
  const written = (await keysOf(target.s3, target.bucket)).filter((k) => /^[a-z_]+\/domain=/.test(k));
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  console.log(
    `rows ${rows} over ${days} days in ${objects} objects: ${mib(gzipBytes)} gzip (${mib(Buffer.byteLength(lines.join('\n')))} NDJSON)`,
  );
  console.log(`handler module load: ${loadMs.toFixed(0)} ms`);
  console.log(
    `ingest: ${(ms / 1000).toFixed(2)} s, ${Math.round(rows / (ms / 1000))} events/s, ${written.length} files written`,
  );
  console.log(`process RSS: ${mib(rssBefore)} before, ${mib(peak)} peak`);
  if (objects >= 8) {
    const upkeepStarted = performance.now();
    const report = await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work });
    const upkeepMs = performance.now() - upkeepStarted;
    console.log(
      `upkeep: ${report.compacted.length} partitions compacted in ${(upkeepMs / 1000).toFixed(2)} s (${(upkeepMs / Math.max(1, report.compacted.length) / 1000).toFixed(2)} s each)`,
    );
  }
} finally {
  await dynamo.close();
  await moto.stop();
}
