// The compression of the Parquet files our own code writes. Two readers, two costs:
// - the local store is read by DuckDB on this machine, where decompressing is the cost: uncompressed files answer
//   the dashboard mix faster than ZSTD ones, for about three times the disk (docs/STORAGE.md, "Compression");
// - files for S3 are read by Athena, which bills the compressed bytes it scans: ZSTD, always.
// ANALYTICS_PARQUET_COMPRESSION picks the local codec for a store where disk matters more than speed.

export const parquetCodecs = ['uncompressed', 'lz4_raw', 'snappy', 'zstd'] as const;
export type ParquetCodec = (typeof parquetCodecs)[number];

export const S3_CODEC: ParquetCodec = 'zstd';

/** The codec of files written into a local store: ANALYTICS_PARQUET_COMPRESSION, else uncompressed. */
export function localCodec(env: NodeJS.ProcessEnv = process.env): ParquetCodec {
  const value = env.ANALYTICS_PARQUET_COMPRESSION?.trim().toLowerCase();
  if (!value) return 'uncompressed';
  if (!(parquetCodecs as readonly string[]).includes(value)) {
    throw new Error(`ANALYTICS_PARQUET_COMPRESSION must be one of ${parquetCodecs.join(', ')}, not "${env.ANALYTICS_PARQUET_COMPRESSION}"`);
  }
  return value as ParquetCodec;
}

/** The options of a DuckDB `COPY ... TO` writing Parquet with `codec` (one of the allow-listed names above). */
export function parquetCopyOptions(codec: ParquetCodec): string {
  return `(FORMAT parquet, COMPRESSION ${codec})`;
}
