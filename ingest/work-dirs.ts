import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

// The writers' work folders under /tmp. A Lambda sandbox is reused between invocations, and an invocation that
// timed out never ran its clean-up: its folders would fill the sandbox's ephemeral storage for the next one. Each
// invocation first removes the folders older than any invocation can run; younger ones may be another's at work.

const WORK_FOLDER = /^(ingest|upkeep|sessions)-[0-9a-f]+$/;

/** Removes this code's work folders in `workDir` last changed more than `olderThanMs` ago; returns their names. */
export async function removeStaleWorkFolders(
  workDir: string,
  olderThanMs: number,
  now = Date.now(),
): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(workDir);
  } catch {
    return removed;
  }
  for (const name of names.filter((n) => WORK_FOLDER.test(n))) {
    const path = join(workDir, name);
    const modified = await stat(path).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (modified === undefined || now - modified < olderThanMs) continue;
    await rm(path, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
