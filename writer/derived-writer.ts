import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { duckdbDialect } from '../shared/query/sql/dialects.js';
import { bucketFileOrder, bucketsOf, pageBucketFileOrder } from '../shared/query/derived/pageview-buckets.js';
import { fragmentFileOrder, fragmentsOf } from '../shared/query/derived/session-fragments.js';
import {
  VISITOR_REVENUE_OUT_OF_RANGE,
  visitorDayFileOrder,
  visitorDaysOf,
} from '../shared/query/derived/visitor-days.js';
import { customEventBucketsOf } from '../shared/query/derived/custom-event-buckets.js';
import { print, trusted, type Sql } from '../shared/query/sql/sql.js';
import { relationCopyOptions, type StoreCodecs } from './parquet-codec.js';

// Writes the derived files of a relation of event rows (a table of one import batch, or an event file read back
// by the backfill): one Parquet file per derived relation (docs/STORAGE.md). Every derived file comes from here.

/**
 * What a writer knows before it writes derived files, as tables of its connection (names chosen by code):
 * `visitorKeys` (visitor_id, visitor_key) holds a key for every visitor of the rows, and the buckets (of every kind) and visitor
 * days are written keyed (a local import, writer/importer.ts); `splitSessions` (session_id) holds the sessions with a
 * fragment in another file, and every other fragment that is its session's only one in the file written (a session
 * has two when its rows are dev and not dev) is written whole (a local import: the sessions in two of its
 * partitions; S3's upkeep: those in another fragment file of the domain, ingest/s3-upkeep.ts). Without them buckets and
 * visitor days are written unkeyed and fragments not whole; the store's own passes correct what other files change
 * (local/store/visitor-keys.ts, local/store/whole-fragments.ts).
 */
export interface WriterKnowledge {
  visitorKeys?: string;
  splitSessions?: string;
}

/**
 * The order of each derived relation's rows in its files, given by whichever writer writes a file (this one, and the
 * keying pass when it rewrites a keyed file: store/visitor-keys.ts).
 */
export const derivedFileOrder: Record<DerivedFolder, string> = {
  sessions: fragmentFileOrder,
  pageviews: bucketFileOrder,
  pages: pageBucketFileOrder,
  visitors: visitorDayFileOrder,
  custom_events: bucketFileOrder,
};

function selectOf(folder: DerivedFolder, rows: Sql, known: WriterKnowledge): string {
  // A keyed relation's rows with the visitors' keys joined where the writer knows them, ordered once after that.
  const keyed = (select: Sql) =>
    known.visitorKeys
      ? `SELECT r.* REPLACE (k.visitor_key AS visitor_key) FROM (${print(select).sql}) r JOIN ${known.visitorKeys} k ON k.visitor_id = r.visitor_id ORDER BY ${derivedFileOrder[folder]}`
      : `${print(select).sql} ORDER BY ${derivedFileOrder[folder]}`;
  switch (folder) {
    case 'sessions': {
      const select = print(fragmentsOf(rows, duckdbDialect)).sql;
      // A session with two fragments in the file (dev and not dev rows) is found by grouping the fragments: a
      // window over them would sort every fragment's columns.
      return known.splitSessions
        ? `WITH fragments AS MATERIALIZED (${select})
           SELECT * REPLACE (session_id NOT IN (SELECT session_id FROM fragments GROUP BY session_id HAVING count(*) > 1)
             AND session_id NOT IN (SELECT session_id FROM ${known.splitSessions}) AS whole)
           FROM fragments ORDER BY ${fragmentFileOrder}`
        : `${select} ORDER BY ${fragmentFileOrder}`;
    }
    case 'pageviews':
    case 'pages':
      return keyed(bucketsOf(rows, folder));
    case 'custom_events':
      return keyed(customEventBucketsOf(rows));
    case 'visitors':
      return keyed(visitorDaysOf(rows));
  }
}

/**
 * Rows whose derived files cannot hold them: a visitor whose revenue in one file (one day of one import, or of a
 * compacted partition) sums past the stored BIGINT range. Imports are refused whole with it; compaction leaves such a
 * partition's files as they are (each of them holds its visitor days, and readers sum them in a wider type).
 */
export class UnwritableRows extends Error {}

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
  options: { only?: DerivedFolder[]; known?: WriterKnowledge } = {},
): Promise<void> {
  for (const folder of options.only ?? derivedRelations.map((r) => r.folder)) {
    const file = join(dirs[folder], name);
    await mkdir(dirname(file), { recursive: true });
    try {
      await connection.run(
        `COPY (${selectOf(folder, trusted(relation), options.known ?? {})}) TO ${pathLiteral(file)} ${relationCopyOptions(codecs, folder)}`,
      );
    } catch (error) {
      const message = (error as Error).message;
      const at = message.indexOf(VISITOR_REVENUE_OUT_OF_RANGE);
      if (at < 0) throw error;
      throw new UnwritableRows(
        `${message.slice(at)}: one visitor's revenue in one UTC day sums past ±9,223,372,036,854,775,807 cents`,
      );
    }
  }
}
