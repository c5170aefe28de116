import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkEvent } from '../../shared/events/event-validation.js';
import { duckdbDialect } from '../../shared/query/sql/dialects.js';
import { print, sql, str } from '../../shared/query/sql/sql.js';
import { memoryDuckDb } from '../support/memory-duckdb.js';

// A property filter reads one key of the stored `event_properties` text (the JSON the importer writes). DuckDB
// reads it through a JSON Pointer built in SQL from the bound key: any key the import accepts, `/` and `~`
// (the pointer's own syntax) among them, must read exactly the value JavaScript reads, and an absent key NULL.

const connection = memoryDuckDb();

/** The stored text of `properties`, as the import writes it; null when the import refuses them. */
function storedProperties(properties: Record<string, string>): string | null {
  const checked = checkEvent({
    type: 'event',
    domain: 'a.test',
    timestamp: '2026-03-01T00:00:00Z',
    visitor_id: 'v',
    session_id: 's',
    event_name: 'e',
    event_properties: properties,
  });
  return checked.ok ? (checked.event.event_properties ?? null) : null;
}

async function readKey(stored: string, key: string): Promise<unknown> {
  const { sql: text, params } = print(duckdbDialect.jsonProperty(sql`${str(stored)}`, str(key)));
  const rows = (
    await connection().runAndReadAll(
      `SELECT ${text} AS value`,
      params.map((p) => String(p.value)),
    )
  ).getRowObjectsJS();
  return rows[0]!.value;
}

const pointerSyntax = [
  '/',
  '~',
  '~0',
  '~1',
  'a/b',
  'x~y',
  '/~',
  '~/',
  '//',
  '0',
  '-',
  '$.a',
  'a.b',
  '[0]',
  '*',
  '"q"',
  'back\\slash',
  'ünï 🚀',
];
const key = fc.oneof(
  fc.constantFrom(...pointerSyntax),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }),
);
const value = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('', '"', '\\', '/', '~1', 'null'),
);

describe('jsonProperty (DuckDB)', () => {
  it('reads every key the import stores, pointer syntax included, as JavaScript does, and NULL for an absent key (150 runs)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.dictionary(key, value, { minKeys: 1, maxKeys: 5 }), key, async (properties, absent) => {
        const stored = storedProperties(properties);
        fc.pre(stored !== null);
        const kept = JSON.parse(stored!) as Record<string, string>;
        for (const k of Object.keys(kept)) expect(await readKey(stored!, k)).toBe(kept[k]);
        if (!(absent in kept)) expect(await readKey(stored!, absent)).toBeNull();
      }),
      { seed: 42, numRuns: 150 },
    );
  });

  it('reads keys that are pointer syntax', async () => {
    const properties = Object.fromEntries(pointerSyntax.map((k, i) => [k, `v${i}`]));
    const stored = storedProperties(properties)!;
    for (const [i, k] of pointerSyntax.entries()) expect(await readKey(stored, k)).toBe(`v${i}`);
  });
});
