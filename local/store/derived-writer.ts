import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { pathLiteral } from '../../shared/engines/duckdb-engine.js';
import type { DerivedFolder } from '../../shared/events/derived-relations.js';
import { duckdbDialect } from '../../shared/query/sql/dialects.js';
import { bucketsOf } from '../../shared/query/derived/pageview-buckets.js';
import { fragmentsOf } from '../../shared/query/derived/session-fragments.js';
import { visitorDaysOf } from '../../shared/query/derived/visitor-days.js';
import { print, trusted, type Sql } from '../../shared/query/sql/sql.js';
import { parquetCopyOptions, type StoreCodecs } from './parquet-codec.js';

// Writes the derived files of a relation of event rows (a table of one import batch, or an event file read back
// by the backfill): one Parquet file per derived relation (docs/STORAGE.md). Every derived file comes from here.

const selects: Record<DerivedFolder, (rows: Sql) => Sql> = {
  sessions: (rows) => fragmentsOf(rows, duckdbDialect),
  pageviews: (rows) => bucketsOf(rows, 'pageviews'),
  pages: (rows) => bucketsOf(rows, 'pages'),
  visitors: (rows) => visitorDaysOf(rows),
};

/**
 * `relation` is a table name or a `read_parquet(...)` call chosen by code, never request data. `name` is the
 * event file's path relative to its events folder; each derived file goes to `<dirs[folder]>/<name>`.
 */
export async function writeDerived(
  connection: DuckDBConnection,
  relation: string,
  name: string,
  dirs: Record<DerivedFolder, string>,
  codecs: StoreCodecs,
  only?: DerivedFolder[],
): Promise<void> {
  for (const folder of only ?? (Object.keys(selects) as DerivedFolder[])) {
    const file = join(dirs[folder], name);
    await mkdir(dirname(file), { recursive: true });
    const select = print(selects[folder](trusted(relation))).sql;
    await connection.run(`COPY (${select}) TO ${pathLiteral(file)} ${parquetCopyOptions(codecs[folder])}`);
  }
}
