import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { localPaths, type LocalPaths } from './paths.js';
import { writeSessionFragments } from './session-fragment-writer.js';

// Writes the missing session fragment files of a local store: every event file without its fragments file
// (data imported before fragments existed) gets one, staged and then renamed into place. Queries combine
// fragments per session, so an event file and its fragments are all that must correspond.
//   ANALYTICS_DATA_DIR=./.data npx tsx local/backfill-sessions.ts

export async function backfillSessionFragments(paths: LocalPaths): Promise<number> {
  if (!existsSync(paths.eventsDir)) return 0;
  const missing = (readdirSync(paths.eventsDir, { recursive: true, encoding: 'utf8' }) as string[])
    .filter((name) => name.endsWith('.parquet') && !existsSync(join(paths.sessionsDir, name)));
  if (missing.length === 0) return 0;
  const instance = await DuckDBInstance.create(':memory:', { threads: String(process.env.DUCKDB_THREADS ?? 2) });
  const connection = await instance.connect();
  const staging = join(paths.stagingDir, `backfill-${process.pid}-sessions`);
  try {
    for (const name of missing) {
      const source = join(paths.eventsDir, name).replaceAll("'", "''");
      await writeSessionFragments(connection, `read_parquet('${source}')`, join(staging, name));
      await mkdir(dirname(join(paths.sessionsDir, name)), { recursive: true });
      await rename(join(staging, name), join(paths.sessionsDir, name));
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
    await rm(staging, { recursive: true, force: true });
  }
  return missing.length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const written = await backfillSessionFragments(localPaths());
  console.log(`${written} session fragment files written`);
}
