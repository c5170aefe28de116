import type { DerivedFolder } from '../shared/events/derived-relations.js';

// The compression of the Parquet files our own code writes, per relation of the store. Two readers, two costs:
// - the local store is read by DuckDB on this machine, where decompressing is the cost. Each relation gets the
//   codec that keeps the dashboard mix fast for its share of the disk (docs/STORAGE.md, "Compression"): Snappy for
//   the events and the pageview buckets, read by most queries; ZSTD for the relations small once compressed or read
//   by few queries. ANALYTICS_PARQUET_COMPRESSION sets one codec for every relation instead. Every codec offered is
//   one Trino reads too (`ANALYTICS_ENGINE=trino`): its Parquet reader cannot decompress DuckDB's LZ4_RAW pages.
// - files for S3 are read by Athena, which bills the compressed bytes it scans: ZSTD, always, at S3_ZSTD_LEVEL.

export const parquetCodecs = ['uncompressed', 'snappy', 'zstd'] as const;
export type ParquetCodec = (typeof parquetCodecs)[number];

/**
 * A codec for each relation a writer produces (the events and every derived relation), and ZSTD's level where the
 * codec is ZSTD (DuckDB's default, 3, where absent).
 */
export type StoreCodecs = Record<'events' | DerivedFolder, ParquetCodec> & { readonly zstdLevel?: number };

/**
 * ZSTD's level in the files the S3 writers write, and in a local store written all in ZSTD. Athena bills the
 * compressed bytes; decompressing costs the same at any level, compressing more at a higher one, once per file
 * written (an ingest, a compaction). Level 16 is where the sizes take their one large step down from DuckDB's default
 * level 3 on the bench's files; the levels above it save little more for more time (docs/BENCHMARKS.md, "ZSTD
 * levels").
 */
export const S3_ZSTD_LEVEL = 16;

const everywhere = (codec: ParquetCodec): StoreCodecs => ({
  events: codec,
  sessions: codec,
  pageviews: codec,
  pages: codec,
  visitors: codec,
  custom_events: codec,
});

export const S3_CODECS: StoreCodecs = { ...everywhere('zstd'), zstdLevel: S3_ZSTD_LEVEL };

export const DEFAULT_LOCAL_CODECS: StoreCodecs = {
  events: 'snappy',
  sessions: 'zstd',
  pageviews: 'snappy',
  pages: 'zstd',
  visitors: 'zstd',
  custom_events: 'zstd',
};

/**
 * The codecs of files written into a local store: ANALYTICS_PARQUET_COMPRESSION for all (`zstd` as the S3 writers
 * write it, at S3_ZSTD_LEVEL), else DEFAULT_LOCAL_CODECS (ZSTD at its default level: a local import pays the time).
 */
export function localCodecs(env: NodeJS.ProcessEnv = process.env): StoreCodecs {
  const value = env.ANALYTICS_PARQUET_COMPRESSION?.trim().toLowerCase();
  if (!value) return DEFAULT_LOCAL_CODECS;
  if (!(parquetCodecs as readonly string[]).includes(value)) {
    throw new Error(
      `ANALYTICS_PARQUET_COMPRESSION must be one of ${parquetCodecs.join(', ')}, not "${env.ANALYTICS_PARQUET_COMPRESSION}"`,
    );
  }
  return value === 'zstd' ? S3_CODECS : everywhere(value as ParquetCodec);
}

/**
 * The options of a DuckDB `COPY ... TO` writing Parquet with `codec` (one of the allow-listed names above), in row
 * groups of `rowGroupRows` rows where given (else DuckDB's default), ZSTD at `zstdLevel` where given.
 */
export function parquetCopyOptions(codec: ParquetCodec, rowGroupRows?: number, zstdLevel?: number): string {
  if (zstdLevel !== undefined && !(Number.isInteger(zstdLevel) && zstdLevel >= 1 && zstdLevel <= 22))
    throw new Error(`a ZSTD level is a whole number from 1 to 22, not ${zstdLevel}`);
  const level = codec === 'zstd' && zstdLevel !== undefined ? `, COMPRESSION_LEVEL ${zstdLevel}` : '';
  return `(FORMAT parquet, COMPRESSION ${codec}${level}${rowGroupRows ? `, ROW_GROUP_SIZE ${Math.trunc(rowGroupRows)}` : ''})`;
}

/** The options of a DuckDB `COPY ... TO` writing a file of `relation` in `codecs`, in DuckDB's default row groups. */
export function relationCopyOptions(codecs: StoreCodecs, relation: 'events' | DerivedFolder): string {
  return parquetCopyOptions(codecs[relation], undefined, codecs.zstdLevel);
}
