// `npm run bench:upkeep [-- --domains 10 --days 730]`: what one upkeep run costs on a store with years of history,
// the question of docs/DEPLOY.md "Upkeep" (a run must stay inside its timeout at 100 domains x 2 years). On moto's S3
// and a dynalite started here: `domains` domains, each with `days` settled partitions (one compacted event file and
// its session fragments, copied server-side from one real ingest; the domains at the current layout), then three
// runs, timed with their S3 requests:
//   idle     nothing arrived: what every run costs once history is there;
//   first    two objects arrived in a new partition of every domain: compaction, and each domain's fragment index
//            built from its whole history (once per domain, the first time it has work);
//   steady   two more objects each: compaction with the index in place, the cost of a run with work from then on.
// Per-domain costs do not depend on other domains, so a run over 100 domains costs 100 / `domains` times these,
// within the run's budget (a run stops starting domains past it; the next starts where it stopped).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { CopyObjectCommand } from '@aws-sdk/client-s3';
import { generateEventLines } from './generator.js';
import { upkeepStore } from '../ingest/s3-upkeep.js';
import { startMoto } from '../local/tools/moto-server.js';
import { ingestBucket } from '../test/support/ingest-bucket.js';
import { keysOf } from '../test/support/s3-keys.js';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { localPaths } from '../local/store/paths.js';
import { recordLayout } from '../shared/store/file-states-repo.js';
import { STORE_LAYOUT } from '../shared/events/store-layout.js';

const { values } = parseArgs({
  options: {
    domains: { type: 'string', default: '10' },
    days: { type: 'string', default: '730' },
  },
});
const domainCount = Number(values.domains);
const days = Number(values.days);
const DAY_MS = 86_400_000;
const lastHistoryDay = Date.parse('2026-11-20T00:00:00Z');
const dayText = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const domains = Array.from({ length: domainCount }, (_, i) => `history-${String(i).padStart(3, '0')}.bench`);

const { ingestHandler } = await import('../functions/ingest-events.js');
const moto = await startMoto();
// Usage and file states in a DynamoDB of a fresh data folder (the test API's support needs vitest's runner).
const dynamo = await openLocalDynamo(localPaths(mkdtempSync(join(tmpdir(), 'bench-dynamo-'))), { publish: false });
try {
  const target = await ingestBucket(moto, 'bench-upkeep');
  const work = mkdtempSync(join(tmpdir(), 'bench-upkeep-'));
  const ingest = ingestHandler(target.s3, work);
  let requests = 0;
  target.s3.middlewareStack.add(
    (next) => async (args) => {
      requests += 1;
      return next(args);
    },
    { step: 'initialize', name: 'countRequests' },
  );
  const objectOf = async (domain: string, endDate: string, seed: number) => {
    const lines: string[] = [];
    for await (const line of generateEventLines({ seed, rows: 300, endDate, days: 1, domain })) lines.push(line);
    return gzipSync(lines.join('\n'));
  };

  // One real partition, copied to every domain and day as upkeep would have left it: one compacted file a relation.
  await target.put('incoming/template.gz', await objectOf('template.bench', dayText(lastHistoryDay), 1));
  if ((await target.deliver(ingest)).length) throw new Error('the template ingest failed');
  const template = (await keysOf(target.s3, target.bucket)).filter((k) =>
    /^(events|sessions)\/domain=template\.bench\/dt=/.test(k),
  );
  const copies: [from: string, to: string][] = [];
  for (const domain of domains)
    for (let d = 0; d < days; d++)
      for (const key of template) {
        const [folder, , , name] = key.split('/');
        const dt = dayText(lastHistoryDay - d * DAY_MS);
        copies.push([key, `${folder}/domain=${domain}/dt=${dt}/compacted-${name}`]);
      }
  // Each domain at the current layout, as its first import records it: upkeep has nothing to upgrade.
  for (const domain of domains) await recordLayout(domain, STORE_LAYOUT);
  const copyStarted = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let copy = copies.pop(); copy; copy = copies.pop())
        await target.s3.send(
          new CopyObjectCommand({ Bucket: target.bucket, Key: copy[1], CopySource: `${target.bucket}/${copy[0]}` }),
        );
    }),
  );
  console.log(
    `history: ${domainCount} domains x ${days} days, ${domainCount * days * template.length} objects copied in ${((performance.now() - copyStarted) / 1000).toFixed(0)} s`,
  );

  const run = async (name: string) => {
    requests = 0;
    const started = performance.now();
    const report = await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { minFiles: 2 });
    const ms = performance.now() - started;
    const perDomain = `${(ms / domainCount).toFixed(0)} ms and ${(requests / domainCount).toFixed(1)} S3 requests per domain`;
    const stopped = report.next ? `, stopped before ${report.next}` : '';
    console.log(
      `${name}: ${(ms / 1000).toFixed(1)} s, ${perDomain}; ${report.compacted.length} partitions compacted${stopped}`,
    );
  };
  const arrive = async (seed: number) => {
    for (const [i, domain] of domains.entries())
      for (const copy of [0, 1])
        await target.put(
          `incoming/${domain}-${seed}-${copy}.gz`,
          await objectOf(domain, dayText(lastHistoryDay + DAY_MS * seed), seed * 1000 + i * 2 + copy),
        );
    if ((await target.deliver(ingest)).length) throw new Error('an ingest failed');
  };
  await run('idle');
  await arrive(1);
  await run('first');
  await arrive(2);
  await run('steady');
} finally {
  await dynamo.close();
  await moto.stop();
}
