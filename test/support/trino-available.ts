import { findJava } from '../../local/tools/trino-install.js';

/**
 * Whether Trino can run here (a Java 24+ runtime). Without one the suite is skipped with one line, unless
 * TRINO_REQUIRED=1 (as `.ci/run` sets), which turns the skip into a failure.
 */
export function trinoAvailable(suite: string): boolean {
  const java = findJava();
  if (!('missing' in java)) return true;
  if (process.env.TRINO_REQUIRED === '1') throw new Error(`TRINO_REQUIRED=1 but ${java.missing}`);
  console.info(`${suite} skipped: ${java.missing}`);
  return false;
}
