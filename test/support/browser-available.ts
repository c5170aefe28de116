import { findChromium } from '../../local/tools/chromium.js';

/**
 * Debian's Chromium, or null when it is missing: the suite is then skipped with one line, unless
 * BROWSER_REQUIRED=1 (as `.ci/run` sets), which turns the skip into a failure.
 */
export function chromiumPath(suite: string): string | null {
  const found = findChromium();
  if ('path' in found) return found.path;
  if (process.env.BROWSER_REQUIRED === '1') throw new Error(`BROWSER_REQUIRED=1 but ${found.missing}`);
  console.info(`${suite} skipped: ${found.missing}`);
  return null;
}
