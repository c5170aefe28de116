import { openScratchDuckDb } from '../local/store/scratch-duckdb.js';

// A Parquet object put under `incoming/` holds events in the import format (docs/EVENT-FORMAT.md): one column per
// field, `timestamp` as a TIMESTAMP (read as UTC) or as ISO text, `event_properties` as a JSON object's text or
// a struct/map. Each row becomes the NDJSON line the importer checks, so a Parquet object meets exactly the rules
// an NDJSON line does, row numbers standing for line numbers.

/** Why a whole object is refused: it is moved to `rejected/` with this as its report's error. */
export class UnreadableObject extends Error {}

export async function* parquetLines(file: string): AsyncGenerator<string> {
  const scratch = await openScratchDuckDb();
  try {
    let result;
    try {
      result = await scratch.connection.stream('SELECT * FROM read_parquet($1)', [file]);
    } catch (error) {
      throw new UnreadableObject(`not a readable Parquet object (${(error as Error).message.split('\n')[0]})`);
    }
    for await (const rows of result.yieldRowObjectJs()) {
      for (const row of rows) yield JSON.stringify(row, jsonValue);
    }
  } finally {
    scratch.close();
  }
}

/** JSON of one Parquet value as the import format spells it. */
function jsonValue(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date) return raw.toISOString();
  if (typeof raw === 'bigint') return Number.isSafeInteger(Number(raw)) ? Number(raw) : raw.toString();
  if (key === 'event_properties' && typeof value === 'string') {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      // Left as text: the importer rejects the row with its reason.
    }
  }
  if (raw instanceof Map) return Object.fromEntries(raw);
  return value;
}
