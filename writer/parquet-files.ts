import { existsSync, readdirSync } from 'node:fs';

/** The Parquet files under `dir`, at any depth, as paths relative to it (`domain=.../dt=.../x.parquet`); none when it does not exist. */
export function parquetFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((name) =>
    name.endsWith('.parquet'),
  );
}
