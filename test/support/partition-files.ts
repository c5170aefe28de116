import { parquetFilesUnder } from '../../writer/parquet-files.js';

/** Parquet files per `domain=/dt=` partition under `dir` (an events or derived folder of a snapshot). */
export function filesPerPartition(dir: string): number[] {
  const counts = new Map<string, number>();
  for (const name of parquetFilesUnder(dir)) {
    const partition = name.split('/').slice(0, 2).join('/');
    counts.set(partition, (counts.get(partition) ?? 0) + 1);
  }
  return [...counts.values()];
}
