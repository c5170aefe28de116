import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localPaths } from '../local/store/paths.js';
import type { Dataset } from './dataset.js';
import { DuckDbTwin } from './duckdb-twin.js';
import { dashboardMix } from './query-mix.js';

// What Athena would scan (and bill) for each query of the mix, from the raw rows and from the derived
// relations (docs/STORAGE.md): the bench's own per-scan estimate (DuckDbTwin.scanFacts: the compressed column
// chunks of the columns each Parquet scan of the profiled statement reads, in the files of its partitions) for
// the two plans of the same request.
//   npx tsx bench/athena-scan.ts <cached data set folder under .bench/data>

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: npx tsx bench/athena-scan.ts <data set folder>');
const meta = JSON.parse(readFileSync(join(dataDir, 'dataset.json'), 'utf8')) as Omit<Dataset, 'paths' | 'reused'>;
const twin = await DuckDbTwin.open({ ...meta, paths: localPaths(dataDir), reused: true });
const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const totals = { raw: 0, derived: 0 };
console.log('| query | raw rows | derived | scans of the derived plan |\n|---|---:|---:|---|');
for (const query of dashboardMix(meta.spec.domain, meta.spec.endDate)) {
  const raw = await twin.scanFacts(query, {
    sessionFragments: false,
    pageviewBuckets: false,
    customEventBuckets: false,
    visitorDays: false,
  });
  const derived = await twin.scanFacts(query);
  totals.raw += raw.athenaBytes;
  totals.derived += derived.athenaBytes;
  const scans = derived.scans.map((s) => `${s.relation} ${mib(s.athenaBytes)}`).join(', ');
  console.log(`| ${query.id} | ${mib(raw.athenaBytes)} | ${mib(derived.athenaBytes)} | ${scans} |`);
}
console.log(`| **sum** | ${mib(totals.raw)} | ${mib(totals.derived)} | |`);
twin.close();
