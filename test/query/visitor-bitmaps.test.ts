import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { print, sql, trusted } from '../../shared/query/sql/sql.js';
import { bitmapVisitorCounts, KEY_CHUNK_BITS } from '../../shared/query/derived/visitor-bitmaps.js';
import { memoryDuckDb } from '../support/memory-duckdb.js';

// Bitmap counts against DuckDB's own count(DISTINCT) on random buckets whose keys span many chunks (the
// store-level tests have too few visitors to leave the first chunk), with and without a group.

const connection = memoryDuckDb();

const chunk = 2 ** KEY_CHUNK_BITS;
// Keys near chunk edges, in the first chunks and far out; days 0-3; several rows per (day, key) are common.
const key = fc.oneof(
  fc.integer({ min: 0, max: 3 * chunk }),
  fc.constantFrom(0, chunk - 1, chunk, chunk + 1, 5 * chunk - 1),
  fc.integer({ min: 0, max: 2 ** 40 }),
);
const bucketRows = fc.array(
  fc.record({ day: fc.integer({ min: 0, max: 3 }), key, pageviews: fc.integer({ min: 1, max: 5 }) }),
  { maxLength: 300 },
);

async function rowsOf(text: string): Promise<Record<string, unknown>[]> {
  return (await connection().runAndReadAll(text)).getRowObjectsJson() as Record<string, unknown>[];
}

describe('bitmapVisitorCounts', () => {
  it('counts what count(DISTINCT visitor_key) counts, per group and in total, and sums pageviews', async () => {
    await fc.assert(
      fc.asyncProperty(bucketRows, async (rows) => {
        await connection().run('CREATE OR REPLACE TABLE b (day INTEGER, visitor_key BIGINT, pageviews BIGINT)');
        if (rows.length)
          await connection().run(
            `INSERT INTO b VALUES ${rows.map((r) => `(${r.day}, ${r.key}, ${r.pageviews})`).join(', ')}`,
          );
        const buckets = sql`SELECT * FROM b`;
        const byDay = print(sql`${bitmapVisitorCounts([sql`day AS d0`], buckets, true)} ORDER BY d0`).sql;
        expect(await rowsOf(byDay)).toEqual(
          await rowsOf(
            'SELECT day AS d0, count(DISTINCT visitor_key) AS visitors, CAST(sum(pageviews) AS BIGINT) AS pageviews FROM b GROUP BY 1 ORDER BY 1',
          ),
        );
        const total = print(bitmapVisitorCounts([], trusted('SELECT * FROM b'), false)).sql;
        const [expected] = await rowsOf('SELECT count(DISTINCT visitor_key) AS visitors FROM b');
        // No rows: no chunk, so the sum is NULL where count(DISTINCT) says 0; the printer's coalesce makes both 0.
        expect((await rowsOf(total))[0]).toEqual(rows.length ? expected : { visitors: null });
      }),
      { numRuns: 60 },
    );
  });
});
