import './env.js';
import { join } from 'node:path';
import { DuckDbEngine } from '../shared/engines/duckdb-engine.js';
import { localTarget, type SqlTarget } from '../shared/query/sql/target.js';
import { EngineRunner } from '../shared/services/engine-runner.js';
import { storeShapeFor } from '../shared/services/store-shape.js';
import { analyticsQueryOf, planOf } from './duckdb-twin.js';
import { planQuery } from '../shared/query/analytics/plan.js';
import type { AnalyticsQuery } from '../shared/requests/query.js';
import { dashboardMix } from './query-mix.js';

// The dashboard mix's statements run directly in DuckDB in three forms: from the raw event rows; from the derived
// relations (session fragments, pageview and page buckets, visitor days: docs/STORAGE.md) counting visitors by
// their text ids; and as the API runs them, from the derived relations counting buckets by their integer visitor
// keys (the journeys list uses no keys: its last two forms are one, and each form reads its details in the same
// statement, as Athena does). The forms alternate in each round (load on the shared machine hits all alike) and their
// answers are compared.
//   npx tsx bench/derived-ab.ts <data dir> [rounds=5]

const [dataDir, roundsArg] = process.argv.slice(2);
if (!dataDir)
  throw new Error(
    'usage: npx tsx bench/derived-ab.ts <data dir with events/ and the derived folders beside it> [rounds]',
  );
const rounds = Number(roundsArg ?? 5);
const engine = await DuckDbEngine.open(join(dataDir, 'events'));
/** The store's shape as the API reads it for `query`: the answer to its plan's question, if it asks one. */
const shapeFor = async (domain: string, query: AnalyticsQuery) => {
  const runner = await EngineRunner.forDomain(domain, engine);
  const { question } = planQuery(query, runner.target.catalog);
  return question ? storeShapeFor(runner, domain, question) : undefined;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const forms = ['raw', 'text ids', 'keys'] as const;
const textIds: SqlTarget = { ...localTarget, catalog: { ...localTarget.catalog, bucketVisitor: 'visitor_id' } };
const totals = { raw: 0, 'text ids': 0, keys: 0 };
console.log(
  '| query | raw rows p50 | derived, text ids p50 | derived, keys p50 | same answer |\n|---|---:|---:|---:|---|',
);
for (const query of dashboardMix('shop.bench.example', '2026-11-20')) {
  // As the API plans it: with the store's shape where it lets visitors be counted by bitmaps.
  const storeShape =
    query.path === '/v1/query' ? await shapeFor(query.body.domain, analyticsQueryOf(query)) : undefined;
  const sql = {
    raw: planOf(query, {
      sessionFragments: false,
      pageviewBuckets: false,
      customEventBuckets: false,
      visitorDays: false,
      oneStatement: true,
    }).sql,
    'text ids': planOf(query, { oneStatement: true }, textIds).sql,
    keys: planOf(query, { oneStatement: true, ...(storeShape ? { storeShape } : {}) }).sql,
  };
  const times = { raw: [] as number[], 'text ids': [] as number[], keys: [] as number[] };
  const answers = new Set<string>();
  for (let round = 0; round <= rounds; round++) {
    for (const form of forms) {
      const started = performance.now();
      const { rows } = await engine.run(sql[form]);
      if (round > 0) times[form].push(performance.now() - started);
      answers.add(JSON.stringify(rows, (_, v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)));
    }
  }
  const p50 = forms.map((form) => median(times[form]));
  forms.forEach((form, i) => (totals[form] += p50[i]!));
  console.log(
    `| ${query.id} | ${p50.map((t) => `${t.toFixed(0)} ms`).join(' | ')} | ${answers.size === 1 ? 'yes' : 'NO'} |`,
  );
}
console.log(`| **sum** | ${forms.map((form) => `${totals[form].toFixed(0)} ms`).join(' | ')} | |`);
engine.close();
