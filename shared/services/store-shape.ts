import type { ShapeQuestion } from '../query/analytics/sources.js';
import { printStoreShape, type BucketRelation } from '../query/derived/pageview-buckets.js';
import { print } from '../query/sql/sql.js';
import type { StoreShape } from '../query/derived/visitor-bitmaps.js';
import type { EngineRunner } from './engine-runner.js';
// The local store's shape (largest visitor key, bucket rows per day, distinct values of the grouped columns), which
// lets the planner count visitors by bitmaps for dimensions it cannot bound itself (docs/STORAGE.md, "Visitor
// bitmaps"). One aggregate over the domain's buckets, kept ten minutes per engine; an older shape is served once
// more while a fresh one is read, so only a domain's first such query waits. It only bounds memory and picks a
// plan: a stale shape never changes an answer.

const FRESH_MS = 10 * 60_000;
const shapes = new WeakMap<object, Map<string, { shape: Promise<StoreShape>; at: number }>>();

/** The answer to a plan's question about `domain`'s store (analytics/plan.ts, planQuery); undefined if unread. */
export async function storeShapeFor(
  runner: EngineRunner,
  domain: string,
  question: ShapeQuestion,
): Promise<StoreShape | undefined> {
  // Without a shape the plan stands: it is exact either way.
  return shapeOf(runner, domain, question.relation, question.columns).catch(() => undefined);
}

function shapeOf(
  runner: EngineRunner,
  domain: string,
  relation: BucketRelation,
  columns: string[],
): Promise<StoreShape> {
  let byKey = shapes.get(runner.cacheScope);
  if (!byKey) shapes.set(runner.cacheScope, (byKey = new Map()));
  const key = JSON.stringify([domain, relation, columns]);
  const cached = byKey.get(key);
  if (cached && Date.now() - cached.at < FRESH_MS) return cached.shape;
  const read = readShape(cached ? runner.fork() : runner, domain, relation, columns);
  if (cached) {
    // Served once more while one fresh read runs: the queries meanwhile see it as fresh and start no other read.
    cached.at = Date.now();
    read.then(
      (shape) => byKey.set(key, { shape: Promise.resolve(shape), at: Date.now() }),
      () => undefined,
    );
    return cached.shape;
  }
  const entry = { shape: read, at: Date.now() };
  byKey.set(key, entry);
  // A failed first read is forgotten, so the next query tries again.
  read.catch(() => byKey.get(key) === entry && byKey.delete(key));
  return read;
}

async function readShape(
  runner: EngineRunner,
  domain: string,
  relation: BucketRelation,
  columns: string[],
): Promise<StoreShape> {
  const [row] = await runner.rows(print(printStoreShape(domain, relation, columns, runner.target.catalog)));
  const days = Number(row?.days ?? 0);
  return {
    maxKey: Number(row?.max_key ?? 0),
    rowsPerDay: days ? Number(row?.bucket_rows ?? 0) / days : 0,
    distinct: Object.fromEntries(columns.map((c, i) => [c, Number(row?.[`c${i}`] ?? 0)])),
  };
}
