import { parquetCopyOptions, type ParquetCodec } from './parquet-codec.js';

// The order of the rows in an event file and the size of its row groups, the same for every writer (the importer,
// compaction, S3's upkeep) and both stores. Rows are grouped by `type` and event name first: readers skip what a
// filter excludes by the row groups' min/max statistics (DuckDB locally; Athena and Trino on S3, where a skipped
// row group is also a byte not billed), so a read of custom events or revenue leaves the pageviews' row groups
// alone in a day large enough for several. Within those, a session's rows lie together in time order: its session
// and visitor ids repeat in runs, which compress better than the same rows in time order. Answers never depend on
// the order, only the bytes read do.

export const eventFileOrder = 'type, event_name, session_id, ts';

/** Rows per row group (DuckDB's default, stated so the layout does not move with it). */
export const EVENT_ROW_GROUP_ROWS = 122_880;

/** The options of a DuckDB `COPY ... TO` writing an event file with `codec`. */
export function eventFileCopyOptions(codec: ParquetCodec): string {
  return parquetCopyOptions(codec, EVENT_ROW_GROUP_ROWS);
}
