import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventSink } from '../../shared/collect/event-sink.js';
import { logger } from '../../shared/log.js';
import { compactStore } from '../store/backfill.js';
import { importNdjson } from '../store/local-destination.js';
import type { LocalPaths } from '../store/paths.js';
import { StoreBusyError } from '../store/store-lock.js';

// The event sink of `npm start` (docs/COLLECTING.md, "Locally"): collected lines wait in memory for at most
// FLUSH_MS, then are written as one NDJSON file under `<data dir>/collected/` (written under another name, synced,
// then renamed: a batch file is whole or absent) and imported by the one importer, which publishes it whole or not
// at all and records its digest, so importing the same file again adds nothing. The file is removed once imported.
// A process killed at any moment therefore loses at most the lines still in memory; a batch file left behind is
// imported at the next start. While another process holds the store lock, batches wait on disk and are tried again.

export const FLUSH_MS = 2_000;
/** The store's partitions are compacted after this many batch imports (each adds a file to today's partitions). */
const COMPACT_EVERY_IMPORTS = 20;

export interface BatchSink extends EventSink {
  /** Writes what is pending and imports every batch file; settles when done (or when the store was busy). */
  flush(): Promise<void>;
  /** Flushes, then stops the timer. */
  close(): Promise<void>;
}

export function localBatchSink(paths: LocalPaths, flushMs = FLUSH_MS): BatchSink {
  const dir = join(paths.dataDir, 'collected');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let pending: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();
  let imports = 0;
  let closed = false;

  const schedule = (ms: number) => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, ms);
    timer.unref();
  };

  const writeBatch = async (lines: string[]) => {
    const name = `${Date.now().toString().padStart(15, '0')}-${randomBytes(6).toString('hex')}.ndjson`;
    const partial = join(dir, `.${name}.partial`);
    const file = await open(partial, 'wx', 0o600);
    try {
      await file.writeFile(lines.map((l) => `${l}\n`).join(''));
      await file.sync();
    } finally {
      await file.close();
    }
    renameSync(partial, join(dir, name));
  };

  /** Imports every batch file in the order written; false when the store was busy (the rest then waits). */
  const importBatches = async (): Promise<boolean> => {
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.ndjson') && !f.startsWith('.'))
      .sort();
    for (const name of files) {
      try {
        const report = await importNdjson(join(dir, name), paths);
        if (report.rejected.length > 0)
          logger.error('collected lines rejected at import', { file: name, rejected: report.rejected.slice(0, 5) });
      } catch (error) {
        if (error instanceof StoreBusyError) return false;
        throw error;
      }
      rmSync(join(dir, name));
      imports++;
    }
    return true;
  };

  const flush = (): Promise<void> => {
    const lines = pending;
    pending = [];
    const step = chain.then(async () => {
      try {
        if (lines.length > 0) await writeBatch(lines);
        const done = await importBatches();
        if (!done) return schedule(flushMs);
        if (imports >= COMPACT_EVERY_IMPORTS) {
          imports = 0;
          await compactStore(paths).catch((error: unknown) => {
            if (!(error instanceof StoreBusyError)) throw error;
          });
        }
      } catch (error) {
        logger.error('collected events could not be imported yet; retrying', { error: error as Error });
        schedule(flushMs * 5);
      }
    });
    chain = step;
    return step;
  };

  // Batches a previous process wrote and did not import (it stopped or was killed): imported now.
  for (const leftover of readdirSync(dir).filter((f) => f.startsWith('.') && f.endsWith('.partial')))
    rmSync(join(dir, leftover));
  if (readdirSync(dir).some((f) => f.endsWith('.ndjson'))) void flush();

  return {
    async write(lines) {
      pending.push(...lines);
      schedule(flushMs);
    },
    flush,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      await flush();
      closed = true;
    },
  };
}
