import { resolve, join } from 'node:path';

/** The folders of ANALYTICS_DATA_DIR: every local command derives its paths here so they see one another. */
export interface LocalPaths {
  dataDir: string;
  eventsDir: string;
  /** Session fragments, one file per event file in the same `domain=/dt=` layout (docs/STORAGE.md). */
  sessionsDir: string;
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
    sessionsDir: join(root, 'sessions'),
    stagingDir: join(root, 'staging'),
    dynamoDir: join(root, 'dynamodb'),
    dynamoEndpointFile: join(root, 'dynamodb-endpoint.json'),
  };
}
