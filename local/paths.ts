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
