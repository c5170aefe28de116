import { parquetCopyOptions, type ParquetCodec } from './parquet-codec.js';

// The order of the rows in an event file and the size of its row groups, the same for every writer (the importer,
// compaction, S3's upkeep) and both stores. Readers prune row groups by their min/max statistics (DuckDB locally,
// Athena and Trino on S3, where a skipped row group is also a byte not billed): with the rows grouped by `type`
// first, a read of custom events or revenue skips the pageviews' row groups; with pageviews grouped by page, a
// page filter skips the other pages'. Within each (type, event, page) run the rows stay in time order, so a range
// that ends inside a day still prunes by `ts`. Answers never depend on the order, only the bytes read do.

export const eventFileOrder = 'type, event_name, url_path, ts';

/** Rows per row group: small enough that a day's custom events or one page's pageviews fill few of them. */
export const EVENT_ROW_GROUP_ROWS = 16_384;

/** The options of a DuckDB `COPY ... TO` writing an event file with `codec`. */
export function eventFileCopyOptions(codec: ParquetCodec): string {
  return parquetCopyOptions(codec, EVENT_ROW_GROUP_ROWS);
}
