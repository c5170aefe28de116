import { existsSync, readdirSync } from 'node:fs';
import { resolve, join } from 'node:path';
import {
  derivedRelations,
  fragmentTwinRelations,
  type DerivedFolder,
  type FragmentTwinFolder,
} from '../../shared/events/derived-relations.js';

/**
 * The folders of ANALYTICS_DATA_DIR: every local command derives its paths here so they see one another. The
 * partitioned folders are those of a snapshot (store/snapshots.ts): by default the current one, as readers see it
 * through the `current` link; a writer works on the paths of its own copy (pathsOfSnapshot).
 */
export interface LocalPaths {
  dataDir: string;
  eventsDir: string;
  /** The derived relations (session fragments, pageview buckets): one file per event file, same layout (docs/STORAGE.md). */
  derivedDirs: Record<DerivedFolder, string>;
  /** The relations derived from the marked session fragments (store/fragment-twins.ts). */
  twinDirs: Record<FragmentTwinFolder, string>;
  /** The import records of the snapshot (store/imports.ts). */
  importsDir: string;
  /** The link to the current snapshot. */
  currentLink: string;
  stagingDir: string;
  dynamoDir: string;
  /** Written by the process serving DynamoDB, so other local commands use it instead of opening the files. */
  dynamoEndpointFile: string;
}

export function localPaths(dataDir = process.env.ANALYTICS_DATA_DIR ?? './.data'): LocalPaths {
  const root = resolve(dataDir);
  return {
    ...snapshotFolders(join(root, 'current')),
    dataDir: root,
    currentLink: join(root, 'current'),
    stagingDir: join(root, 'staging'),
    dynamoDir: join(root, 'dynamodb'),
    dynamoEndpointFile: join(root, 'dynamodb-endpoint.json'),
  };
}

/** The same data folder with the partitioned folders of the snapshot at `snapshotDir`. */
export function pathsOfSnapshot(paths: LocalPaths, snapshotDir: string): LocalPaths {
  return { ...paths, ...snapshotFolders(snapshotDir) };
}

function snapshotFolders(dir: string): Pick<LocalPaths, 'eventsDir' | 'derivedDirs' | 'twinDirs' | 'importsDir'> {
  return {
    eventsDir: join(dir, 'events'),
    derivedDirs: Object.fromEntries(derivedRelations.map((r) => [r.folder, join(dir, r.folder)])) as Record<
      DerivedFolder,
      string
    >,
    twinDirs: Object.fromEntries(fragmentTwinRelations.map((r) => [r.folder, join(dir, r.folder)])) as Record<
      FragmentTwinFolder,
      string
    >,
    importsDir: join(dir, 'imports'),
  };
}

/** The domains with a `domain=<d>` folder under `dir` (an events or derived folder, or its staging twin). */
export function domainsUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => d.startsWith('domain='))
    .map((d) => d.slice('domain='.length));
}
