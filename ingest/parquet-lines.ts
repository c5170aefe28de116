import { openScratchDuckDb } from '../writer/scratch-duckdb.js';
import { eventColumns } from '../shared/events/event-columns.js';

// A Parquet object put under `incoming/` holds events in the import format (docs/EVENT-FORMAT.md): one column per
// field, `timestamp` as a TIMESTAMP (read as UTC), a TIMESTAMP WITH TIME ZONE or ISO text, `event_properties` as a
// JSON object's text, a struct or a map. Each row becomes the NDJSON line the importer checks, so a Parquet object
// meets exactly the rules an NDJSON line does, row numbers standing for line numbers.
//
// Only the format's fields are read (others are ignored, as in NDJSON), and every value that JavaScript cannot hold
// is turned into text by the engine first: a timestamp as ISO text, or `infinity` for an infinite one (a year past
// 9999 stays as DuckDB prints it), so the importer rejects that row by number instead of the whole object failing.
// `event_properties` that is not text (a map, a struct) becomes its JSON text, with DuckDB's digits.

/** The import format's fields: the stored columns, with `timestamp` for `ts` and `domain`, less what is derived. */
const IMPORT_FIELDS = [
  'domain',
  'timestamp',
  ...eventColumns.map(([name]) => name as string).filter((name) => name !== 'ts' && name !== 'referrer_domain'),
];
const TEMPORAL = /^(TIMESTAMP|DATE|TIME)/;

/** Why a whole object is refused: it is moved to `rejected/` with this as its report's error. */
export class UnreadableObject extends Error {}

export async function* parquetLines(file: string): AsyncGenerator<string> {
  const scratch = await openScratchDuckDb();
  try {
    let result;
    try {
      const described = (
        await scratch.connection.runAndReadAll('DESCRIBE SELECT * FROM read_parquet($1)', [file])
      ).getRowObjectsJS() as { column_name: string; column_type: string }[];
      const types = new Map(described.map((c) => [c.column_name, c.column_type]));
      const fields = IMPORT_FIELDS.filter((field) => types.has(field)).map((field) =>
        fieldSelect(field, types.get(field)!),
      );
      result = await scratch.connection.stream(
        `SELECT ${fields.length ? fields.join(', ') : 'NULL AS "domain"'} FROM read_parquet($1)`,
        [file],
      );
    } catch (error) {
      throw new UnreadableObject(`not a readable Parquet object (${(error as Error).message.split('\n')[0]})`);
    }
    for await (const rows of result.yieldRowObjectJs()) {
      for (const row of rows) yield lineOf(row);
    }
  } finally {
    scratch.close();
  }
}

/**
 * The select item of one import field (a name of IMPORT_FIELDS, our own constant) of Parquet type `type`: values
 * JavaScript cannot hold become text in the engine.
 */
function fieldSelect(field: string, type: string): string {
  if (!/^[a-z_]+$/.test(field)) throw new Error(`not an import field: ${field}`);
  const column = `"${field}"`;
  // to_json writes BIGINT, UBIGINT and DECIMAL values with all their digits (Parquet holds no wider integer).
  if (field === 'event_properties' && type !== 'VARCHAR') return `CAST(to_json(${column}) AS VARCHAR) AS ${column}`;
  if (!TEMPORAL.test(type)) return column;
  const utc = type.startsWith('TIMESTAMP WITH TIME ZONE')
    ? `timezone('UTC', ${column})`
    : `CAST(${column} AS TIMESTAMP)`;
  return `CASE WHEN ${column} IS NULL THEN NULL WHEN isinf(${column}) THEN 'infinity' ELSE strftime(${utc}, '%Y-%m-%dT%H:%M:%S.%gZ') END AS ${column}`;
}

/**
 * The NDJSON line of one row. `event_properties` that is JSON text goes into the line as that text, never parsed
 * and printed again, so that its numbers reach the importer's checks with every digit they were written with (a
 * number a double cannot keep is then rejected by row, as in NDJSON); its line breaks, which valid JSON has only
 * between tokens, become spaces. Text that is not JSON stays a string, which the importer rejects with its reason.
 */
function lineOf(row: Record<string, unknown>): string {
  const { event_properties: properties, ...rest } = row;
  const line = JSON.stringify(rest, jsonValue);
  if (typeof properties !== 'string' || !isJson(properties)) {
    return properties === undefined ? line : JSON.stringify(row, jsonValue);
  }
  const raw = properties.replace(/[\r\n]/g, ' ');
  return line === '{}' ? `{"event_properties":${raw}}` : `${line.slice(0, -1)},"event_properties":${raw}}`;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON of one Parquet value as the import format spells it. */
function jsonValue(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (typeof raw === 'bigint') return Number.isSafeInteger(Number(raw)) ? Number(raw) : raw.toString();
  return value;
}
