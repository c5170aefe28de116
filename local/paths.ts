import { existsSync, readdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';

/** The folders of ANALYTICS_DATA_DIR: every local command derives its paths here so they see one another. */
export interface LocalPaths {
  dataDir: string;
  eventsDir: string;
  /** The derived relations (session fragments, pageview buckets): one file per event file, same layout (docs/STORAGE.md). */
  derivedDirs: Record<DerivedFolder, string>;
  stagingDir: string;
  dynamoDir: string;
  /** Written by the process serving DynamoDB, so other local commands use it instead of opening the files. */
  dynamoEndpointFile: string;
}

export function localPaths(dataDir = process.env.ANALYTICS_DATA_DIR ?? './.data'): LocalPaths {
  const root = resolve(dataDir);
  return {
    dataDir: root,
    eventsDir: join(root, 'events'),
    derivedDirs: Object.fromEntries(derivedRelations.map((r) => [r.folder, join(root, r.folder)])) as Record<DerivedFolder, string>,
    stagingDir: join(root, 'staging'),
    dynamoDir: join(root, 'dynamodb'),
    dynamoEndpointFile: join(root, 'dynamodb-endpoint.json'),
  };
}

/** The Parquet files under `dir`, at any depth, as paths relative to it (`domain=.../dt=.../x.parquet`); none when it does not exist. */
export function parquetFilesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((name) => name.endsWith('.parquet'));
}

/** The domains with a `domain=<d>` folder under `dir` (an events or derived folder, or its staging twin). */
export function domainsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((d) => d.startsWith('domain=')).map((d) => d.slice('domain='.length));
}
