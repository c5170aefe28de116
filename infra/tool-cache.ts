import { homedir } from 'node:os';
import { join } from 'node:path';

// The cache outside the repository for what the project downloads: the DuckDB modules of the ingest functions'
// bundle (infra/duckdb-lambda-modules.ts), and the tools the tests and the local modes run (local/tools/).

/** Where downloads and unpacked tools live: ANALYTICS_CACHE_DIR, else `$XDG_CACHE_HOME/analytics-query-api`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ANALYTICS_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'analytics-query-api');
}
