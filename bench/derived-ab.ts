import { join } from 'node:path';
import { DuckDbEngine } from '../shared/engines/duckdb-engine.js';
import { planOf } from './duckdb-twin.js';
import { dashboardMix } from './query-mix.js';

// The dashboard mix's /v1/query statements run directly in DuckDB from the raw event rows and from the derived
// relations (session fragments, pageview buckets: docs/STORAGE.md), alternating the two forms in each round (load
// on the shared machine hits both alike), with the answers compared. Journeys read neither and are left out.
//   npx tsx bench/derived-ab.ts <data dir> [rounds=5]

const [dataDir, roundsArg] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: npx tsx bench/derived-ab.ts <data dir with events/, sessions/ and pageviews/> [rounds]');
const rounds = Number(roundsArg ?? 5);
const engine = await DuckDbEngine.open(join(dataDir, 'events'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const totals = { raw: 0, derived: 0 };
console.log('| query | raw rows p50 | derived p50 | same answer |\n|---|---:|---:|---|');
for (const query of dashboardMix('shop.bench.example', '2026-11-20')) {
  if (query.path !== '/v1/query') continue;
  const forms = { raw: planOf(query, { sessionFragments: false, pageviewBuckets: false }).sql, derived: planOf(query).sql };
  const times = { raw: [] as number[], derived: [] as number[] };
  const answers: Record<string, string> = {};
  for (let round = 0; round <= rounds; round++) {
    for (const form of ['raw', 'derived'] as const) {
      const started = performance.now();
      const { rows } = await engine.run(forms[form]);
      if (round > 0) times[form].push(performance.now() - started);
      answers[form] = JSON.stringify(rows, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v));
    }
  }
  const raw = median(times.raw);
  const derived = median(times.derived);
  totals.raw += raw;
  totals.derived += derived;
  console.log(`| ${query.id} | ${raw.toFixed(0)} ms | ${derived.toFixed(0)} ms | ${answers.raw === answers.derived ? 'yes' : 'NO'} |`);
}
console.log(`| **sum** | ${totals.raw.toFixed(0)} ms | ${totals.derived.toFixed(0)} ms | |`);
engine.close();
