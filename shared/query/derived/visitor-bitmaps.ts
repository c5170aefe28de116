import { integer, join, sql, type Sql } from '../sql/sql.js';

// Distinct visitor counts by bitmaps of their integer keys (docs/STORAGE.md, "Visitor bitmaps"). A hash of every
// (group, visitor) pair is most of the work of a daily series; DuckDB's bitstring_agg sets bits instead: a group's
// keys are split in chunks of 2^KEY_CHUNK_BITS, each chunk a 4 KiB bitmap, and the set bits of its chunks are
// summed, so only (group, chunk) pairs are hashed. A bitmap costs memory whether one bit or all are set: at most
// groups x visitors / 8 bytes once dense, so the sources decider uses them for few groups only: no dimension, the
// dates of a range up to MAX_BITMAP_GROUPS days, or any grouping whose bound from the store's shape (its key
// space, its distinct values per column) stays within MAX_BITMAP_BYTES. Keys exist in local stores only.

export const KEY_CHUNK_BITS = 15;
export const MAX_BITMAP_GROUPS = 120;
export const MAX_BITMAP_BYTES = 256 * 2 ** 20;

/**
 * What bounds a local store's bitmaps for a domain: its largest visitor key, and the number of distinct values
 * (NULL counted as one) of bucket columns, over every partition. Read from the store (services/store-shape.ts).
 */
export interface StoreShape {
  maxKey: number;
  /** Bucket rows per day with rows, on average. */
  rowsPerDay: number;
  distinct: Record<string, number>;
}

/**
 * Fewer bucket rows per possible (group, chunk) bitmap than this, and the bitmaps cost more than the hash: 16 rows
 * per 4,096 keys, whatever the chunk's size (a bitmap is zeroed and counted whole).
 */
export const MIN_ROWS_PER_BITMAP = 16 * (2 ** KEY_CHUNK_BITS / 4096);

/**
 * Whether bitmaps pay for `groups` groups over `days` days of a store of this shape: their most memory (one
 * bitmap per group and key chunk) within MAX_BITMAP_BYTES, and enough rows per bitmap: sparse bitmaps cost more
 * than the hash they replace.
 */
export function isBitmapCountCheaper(groups: number, days: number, shape: StoreShape): boolean {
  const bitmaps = groups * (Math.floor(shape.maxKey / 2 ** KEY_CHUNK_BITS) + 1);
  return (
    bitmaps * (2 ** KEY_CHUNK_BITS / 8) <= MAX_BITMAP_BYTES &&
    (shape.rowsPerDay * days) / bitmaps >= MIN_ROWS_PER_BITMAP
  );
}

/**
 * `SELECT <slots>, visitors[, pageviews] FROM <buckets> GROUP BY <slots>` in two passes: per (group, key chunk)
 * the bitmap's set bits, then their sum per group. `dimensions` are the slot expressions `<expr> AS dN`.
 */
export function bitmapVisitorCounts(dimensions: Sql[], buckets: Sql, withPageviews: boolean): Sql {
  const mask = integer(2 ** KEY_CHUNK_BITS - 1);
  const slots = dimensions.map((_, i) => sql`d${integer(i)}`);
  const ordinals = dimensions.map((_, i) => integer(i + 1));
  const pageviews = withPageviews ? [sql`CAST(sum(pageviews) AS BIGINT) AS pageviews`] : [];
  return sql`SELECT ${join([...slots, sql`CAST(sum(visitors) AS BIGINT) AS visitors`, ...pageviews])}
      FROM (SELECT ${join([...dimensions, sql`bit_count(bitstring_agg(visitor_key & ${mask}, 0, ${mask})) AS visitors`, ...(withPageviews ? [sql`sum(pageviews) AS pageviews`] : [])])}
        FROM (${buckets}) buckets GROUP BY ${join([...ordinals, sql`visitor_key >> ${integer(KEY_CHUNK_BITS)}`])}) chunks${slots.length ? sql` GROUP BY ${join(ordinals)}` : sql``}`;
}
