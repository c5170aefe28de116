import { join } from 'node:path';
import { DuckDbEngine } from '../shared/engines/duckdb-engine.js';
import { planOf } from './duckdb-twin.js';
import { dashboardMix } from './query-mix.js';

// What Athena would scan (and bill) for each /v1/query of the mix, without and with session fragments:
// the compressed column chunks (parquet_metadata) of the columns each relation's reads touch, in the files
// of the partitions read. Raw: plan.columns + is_dev of the range's event files. Fragments: the event columns
// minus session_id when no filter needs it, plus, in the partial partitions at the ends, session_id; plus the
// fragment columns read from the whole partitions' fragment files (visitor_id only for the event dimension, the
// one use the engines do not prune). (Row groups that ts statistics rule out are
// still counted: an upper bound.)
//   npx tsx bench/athena-scan.ts <data dir with events/ and sessions/>

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: npx tsx bench/athena-scan.ts <data dir>');
const engine = await DuckDbEngine.open(join(dataDir, 'events'));
const chunks = async (dir: string) =>
  (await engine.runRaw(
    `SELECT regexp_extract(file_name, 'dt=([0-9-]+)', 1) AS dt, path_in_schema AS col, sum(total_compressed_size) AS bytes FROM parquet_metadata('${join(dataDir, dir)}/*/*/*.parquet') GROUP BY ALL`,
  )).map((r) => ({ dt: String(r.dt), col: String(r.col), bytes: Number(r.bytes) }));
const events = await chunks('events');
const sessions = await chunks('sessions');
const sum = (rows: typeof events, from: string, to: string, cols: string[]) =>
  rows.filter((r) => r.dt >= from && r.dt <= to && cols.includes(r.col)).reduce((s, r) => s + r.bytes, 0);
const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
let before = 0;
let after = 0;
console.log('| query | raw scan | with fragments | fragment files part |\n|---|---:|---:|---:|');
for (const query of dashboardMix('shop.bench.example', '2026-11-20')) {
  if (query.path !== '/v1/query') continue;
  const { columns, dtFrom, dtTo } = planOf(query, { sessionFragments: false });
  const raw = sum(events, dtFrom, dtTo, [...columns, 'is_dev']);
  const fragmentsPlan = planOf(query);
  let withFragments = raw;
  let fragmentPart = 0;
  const printed = fragmentsPlan.sql.sql;
  const whole = /FROM session_fragments\nWHERE domain = \? AND dt BETWEEN/.test(printed);
  if (whole) {
    const needsSessionId = query.body.filters?.length ? ['session_id'] : [];
    const eventCols = [...columns.filter((c) => c !== 'session_id'), ...needsSessionId, 'is_dev'];
    const sessionParams = fragmentsPlan.sql.params.filter((p) => p.type === 'date').map((p) => String(p.value));
    // The fragment scan's dt bounds are the second pair of dates in the statement (the first is the events scope).
    const [wholeFrom, wholeTo] = [sessionParams[2]!, sessionParams[3]!];
    const fragmentCols = printed.match(/session_pieces AS \(SELECT (.*?) FROM session_fragments/)![1]!.split(', ')
      // Both engines drop the unused `min(visitor_id)` unless sessions are joined to event segments.
      .filter((c) => c !== 'visitor_id' || query.body.dimensions?.includes('event'))
      .concat('is_dev');
    fragmentPart = sum(sessions, wholeFrom, wholeTo, fragmentCols);
    const edges = sum(events, dtFrom, dtTo, ['session_id']) - sum(events, wholeFrom, wholeTo, ['session_id']);
    withFragments = sum(events, dtFrom, dtTo, eventCols) + (needsSessionId.length ? 0 : edges) + fragmentPart;
  }
  before += raw;
  after += withFragments;
  console.log(`| ${query.id} | ${mib(raw)} | ${mib(withFragments)} | ${whole ? mib(fragmentPart) : '–'} |`);
}
console.log(`| **sum** | ${mib(before)} | ${mib(after)} | |`);
engine.close();
