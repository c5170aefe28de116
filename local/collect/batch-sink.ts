import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventSink } from '../../shared/collect/event-sink.js';
import { logger } from '../../shared/log.js';
import { compactStore } from '../store/backfill.js';
import { importNdjson } from '../store/local-destination.js';
import type { LocalPaths } from '../store/paths.js';
import { running, StoreBusyError, thisProcess, type Owner } from '../store/store-lock.js';

// The event sink of `npm start` (docs/COLLECTING.md, "Locally"). Collected lines are appended to the open batch file
// under `<data dir>/collected/` and synced to disk before `write` resolves, so an event is answered 202 only once it
// is on disk; concurrent writes share one sync. Every FLUSH_MS the open file is closed and renamed into a ready batch,
// which the one importer imports: it publishes the batch whole or not at all and records its digest, so importing the
// same file again adds nothing; the file is removed once imported. A process killed at any moment thus loses no
// answered event and writes no part of a batch: an open file is named after its process, and once that process is
// gone (the next start, or another process on the same folder) it is cut after its last whole line (a line cut short
// was never answered) and imported with the ready batches. Two processes on one folder may both import a ready batch:
// the import record makes the second a no-op. While another process holds the store lock, batches wait on disk; a
// batch whose import fails waits on disk too, holding back none of the others, and is tried again after a pause that
// doubles with each failure (10 s up to 10 minutes), each failure logged once with the next try's time.

export const FLUSH_MS = 2_000;
/** The store's partitions are compacted after this many batch imports (each adds a file to today's partitions). */
const COMPACT_EVERY_IMPORTS = 20;
const OPEN_PREFIX = '.open-';
/** A failed batch's pause before its next try doubles from FLUSH_MS x 5 up to this. */
const MAX_RETRY_MS = 10 * 60_000;

export interface BatchSink extends EventSink {
  /** Closes the open batch and imports every ready one; settles when done (or when the store was busy). */
  flush(): Promise<void>;
  /** Flushes, then stops the timer. */
  close(): Promise<void>;
}

export function localBatchSink(paths: LocalPaths, flushMs = FLUSH_MS, now: () => number = Date.now): BatchSink {
  const dir = join(paths.dataDir, 'collected');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const owner = thisProcess();
  const batchName = () => `${Date.now().toString().padStart(15, '0')}-${randomBytes(6).toString('hex')}.ndjson`;
  const openName = (name: string) => `${OPEN_PREFIX}${owner.pid}~${owner.start}~${name}`;

  /** Open batches of processes that are gone: each cut after its last whole line, then made ready. */
  const recoverOrphans = () => {
    for (const file of readdirSync(dir)) {
      const parsed = /^\.open-(\d+)~(.*)~(\d{15}-[0-9a-f]{12}\.ndjson)$/.exec(file);
      if (!parsed || running({ pid: Number(parsed[1]), start: parsed[2]! } satisfies Owner)) continue;
      try {
        const text = readFileSync(join(dir, file));
        truncateSync(join(dir, file), text.lastIndexOf(10) + 1);
        renameSync(join(dir, file), join(dir, parsed[3]!));
      } catch {
        // taken over by another process meanwhile
      }
    }
  };
  recoverOrphans();

  let current: { handle: FileHandle; name: string; size: number } | undefined;
  let queued: { lines: string[]; done: () => void; failed: (error: unknown) => void }[] = [];
  let files: Promise<unknown> = Promise.resolve();
  let imports: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (real time): a sooner round replaces it. */
  let timerDue = Infinity;
  let imported = 0;
  let closed = false;
  /** Batches whose import failed: how often, and when each is tried next. */
  const failed = new Map<string, { failures: number; nextTry: number }>();

  /** Appends every queued write to the open file with one sync, then answers each. */
  const append = async () => {
    const batch = queued;
    queued = [];
    if (batch.length === 0) return;
    const text = batch.flatMap((w) => w.lines.map((l) => `${l}\n`)).join('');
    try {
      if (!current) {
        const name = batchName();
        current = { handle: await open(join(dir, openName(name)), 'wx', 0o600), name, size: 0 };
        schedule();
      }
      await current.handle.appendFile(text);
      await current.handle.sync();
      current.size += Buffer.byteLength(text);
      for (const w of batch) w.done();
    } catch (error) {
      // Nothing of a failed group may stay in the file: the next group's first line would run into it.
      await current?.handle.truncate(current.size).catch(() => rotate());
      for (const w of batch) w.failed(error);
    }
  };

  /** Closes the open file into a ready batch. */
  const rotate = async () => {
    if (!current) return;
    const { handle, name } = current;
    current = undefined;
    await handle.close();
    renameSync(join(dir, openName(name)), join(dir, name));
  };

  /**
   * Imports every ready batch in the order written; stops at a busy store (tried again at the next rotation). A batch
   * that fails stays on disk and waits for its next try (failed), while the batches after it are imported: its
   * events are rows of their own, so one batch's failure holds back no other.
   */
  const importReady = async () => {
    recoverOrphans();
    const ready = readdirSync(dir)
      .filter((f) => f.endsWith('.ndjson') && !f.startsWith('.'))
      .sort();
    const present = new Set(ready);
    for (const name of failed.keys()) if (!present.has(name)) failed.delete(name);
    for (const name of ready) {
      const before = failed.get(name);
      if (before && before.nextTry > now()) continue;
      try {
        const report = await importNdjson(join(dir, name), paths);
        if (report.rejected.length > 0)
          logger.error('collected lines rejected at import', { file: name, rejected: report.rejected.slice(0, 5) });
      } catch (error) {
        if (error instanceof StoreBusyError) return schedule();
        // Another process on this folder imported and removed it meanwhile.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        const failures = (before?.failures ?? 0) + 1;
        const pause = Math.min(flushMs * 5 * 2 ** (failures - 1), MAX_RETRY_MS);
        failed.set(name, { failures, nextTry: now() + pause });
        logger.error('a batch of collected events could not be imported; it stays on disk', {
          file: name,
          failures,
          next_try_in_s: Math.round(pause / 1000),
          error: error as Error,
        });
        continue;
      }
      failed.delete(name);
      rmSync(join(dir, name), { force: true });
      imported++;
    }
    if (imported >= COMPACT_EVERY_IMPORTS) {
      imported = 0;
      await compactStore(paths).catch((error: unknown) => {
        if (!(error instanceof StoreBusyError)) throw error;
      });
    }
    // A batch waiting for its next try needs a round then, even if nothing else is written.
    let next = Infinity;
    for (const { nextTry } of failed.values()) next = Math.min(next, nextTry);
    if (Number.isFinite(next)) schedule(Math.max(next - now(), flushMs));
  };

  /** A failed step is logged and tried again later; it never stops the steps after it. */
  const retried = (step: () => Promise<void>) => () =>
    step().catch((error: unknown) => {
      logger.error('collected events could not be imported yet; retrying', { error: error as Error });
      schedule(flushMs * 5);
    });

  const flush = async (): Promise<void> => {
    files = files.then(retried(rotate));
    await files;
    imports = imports.then(retried(importReady));
    await imports;
  };

  /** A round in `ms`, unless one is due sooner: a failed batch's long pause never delays newly written events. */
  function schedule(ms = flushMs) {
    if (closed) return;
    const due = Date.now() + ms;
    if (timer) {
      if (timerDue <= due) return;
      clearTimeout(timer);
    }
    timerDue = due;
    timer = setTimeout(() => {
      timer = undefined;
      timerDue = Infinity;
      void flush();
    }, ms);
    timer.unref();
  }

  if (readdirSync(dir).some((f) => f.endsWith('.ndjson'))) void flush();

  return {
    write(lines) {
      return new Promise<void>((done, failed) => {
        if (closed) return failed(new Error('the collector is closed'));
        queued.push({ lines, done, failed });
        // Writes arriving while one sync runs are appended together after it: one sync per group.
        if (queued.length === 1) files = files.then(append);
      });
    },
    flush,
    async close() {
      clearTimeout(timer);
      timer = undefined;
      await flush();
      closed = true;
      // The last round may have scheduled a retry: nothing runs after close.
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
