// A seeded PRNG for generated data (the demo site, the benchmark): the same numbers on every machine.

export type Weighted<T> = readonly (readonly [T, number])[];

/** mulberry32: tiny, fast, and the same numbers on every machine. */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const chance = (p: number) => next() < p;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const weighted = <T>(entries: Weighted<T>): T => {
    const { items, cumulative } = tableOf(entries);
    const r = next() * cumulative[cumulative.length - 1]!;
    let i = 0;
    while (cumulative[i]! <= r && i < items.length - 1) i++;
    return items[i]!;
  };
  /** 0, 1, 2, ... with P(k) = (1 - p)^k p, capped. */
  const geometric = (p: number, max: number) => {
    let k = 0;
    while (next() > p && k < max) k++;
    return k;
  };
  return { next, int, chance, pick, weighted, geometric };
}

/** Cumulative weights, computed once per list (the lists are module constants or few per page). */
const tables = new WeakMap<object, { items: unknown[]; cumulative: number[] }>();
function tableOf<T>(entries: Weighted<T>): { items: T[]; cumulative: number[] } {
  let table = tables.get(entries);
  if (!table) {
    let sum = 0;
    table = { items: entries.map(([item]) => item), cumulative: entries.map(([, w]) => (sum += w)) };
    tables.set(entries, table);
  }
  return table as { items: T[]; cumulative: number[] };
}
