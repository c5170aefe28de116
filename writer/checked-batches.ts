import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { checkEvent, checkEventLine, type CheckedEvent } from '../shared/events/event-validation.js';
import { linesOfBlock, type LineBlock, type LineError } from './ndjson-lines.js';

// Input lines checked in batches, each batch turned into what the importer keeps of it: the accepted rows as
// NDJSON of stored rows grouped by partition (read back in bulk by DuckDB, docs/STORAGE.md "Import"), each
// partition's facts, the rejected lines with their numbers and reasons, and the rows per domain. The blocks of a
// large file are checked on worker threads when the code runs from its TypeScript source; either way the same
// functions run, and batches come back in input order.

export interface CheckedBatch {
  /** The lines the batch held, blank ones included: the next batch's first line is this one's plus `lines`. */
  lines: number;
  /**
   * The accepted rows, one JSON object per line (a StoredEvent: `ts` in epoch milliseconds, no `domain`), UTF-8,
   * each ending in LF; the rows of one partition together, in input order, the partitions in the order of
   * `partitions`.
   */
  rows: Uint8Array;
  accepted: number;
  /** Rejected lines, numbered from 1 within the batch. */
  rejected: { line: number; reason: string }[];
  /** Accepted rows per domain. */
  domains: Record<string, number>;
  /** The partitions of the accepted rows, each with where its bytes end in `rows` and in `facts`. */
  partitions: BatchPartition[];
  /**
   * What the importer must know of a domain's whole import before it writes any of its files (writer/importer.ts):
   * per partition, one JSON object per line, `{"v":<visitor_id>}` for each visitor (every type of row) and
   * `{"s":<session_id>}` for each session (a non-empty `session_id`), each once per batch and partition.
   */
  facts: Uint8Array;
}

export interface BatchPartition {
  /** `<domain>/<dt>`, one per partition. */
  key: string;
  domain: string;
  /** `yyyy-mm-dd`: the UTC day of its rows' `ts`. */
  dt: string;
  rows: number;
  /** The end of its bytes in the batch's `rows` (the previous partition's end, or 0, is where they begin). */
  rowsEnd: number;
  /** The end of its bytes in the batch's `facts`. */
  factsEnd: number;
}

const DAY_MS = 86_400_000;

/**
 * The largest stored row the importer keeps, in UTF-8 bytes: DuckDB reads the rows back with a bounded object size
 * (writer/importer.ts), and a smaller bound reads faster. An NDJSON line (at most 1 MiB) never comes near it: a
 * stored row grows from its line by the columns' names and by numbers written out in event_properties
 * (`1e20` becomes a 21-digit string), a few times at most. Events given as values or read from Parquet have no
 * line limit; one whose row would exceed this is rejected with that reason.
 */
export const MAX_STORED_ROW_BYTES = 8 * 2 ** 20;

/** Checks lines as read (a LineError where the reader refused one); blank lines are skipped but counted. */
export function checkLines(lines: (string | LineError)[]): CheckedBatch {
  return keptOf(
    lines.map((line) => (typeof line === 'string' ? checkEventLine(line) : { ok: false, reason: line.reason })),
  );
}

/** Checks events given as values (tests, the demo); event i is line i + 1. */
export function checkEventBatch(events: unknown[]): CheckedBatch {
  return keptOf(events.map(checkEvent));
}

function keptOf(checked: (CheckedEvent | null)[]): CheckedBatch {
  const rejected: CheckedBatch['rejected'] = [];
  const domains: Record<string, number> = {};
  // Per domain, per UTC day number, its partition's rows and facts: the partition named once per batch, not per row.
  const partitions = new Map<string, Map<number, PartitionRows>>();
  let accepted = 0;
  checked.forEach((result, i) => {
    if (result === null) return;
    if (!result.ok) {
      rejected.push({ line: i + 1, reason: result.reason });
      return;
    }
    const { domain, event } = result;
    const row = JSON.stringify(event);
    // A UTF-16 unit is at most 3 bytes of UTF-8: only long rows are measured.
    if (row.length > MAX_STORED_ROW_BYTES / 3 && Buffer.byteLength(row) > MAX_STORED_ROW_BYTES) {
      rejected.push({
        line: i + 1,
        reason: `event too large: its stored row would take more than ${MAX_STORED_ROW_BYTES} bytes`,
      });
      return;
    }
    let days = partitions.get(domain);
    if (!days) partitions.set(domain, (days = new Map()));
    const day = Math.floor(event.ts / DAY_MS);
    let partition = days.get(day);
    if (!partition) days.set(day, (partition = { domain, day, rows: [], visitors: new Set(), sessions: new Set() }));
    partition.rows.push(row);
    if (event.visitor_id) partition.visitors.add(event.visitor_id);
    if (event.session_id) partition.sessions.add(event.session_id);
    domains[domain] = (domains[domain] ?? 0) + 1;
    accepted++;
  });
  const kept = [...partitions.values()].flatMap((days) => [...days.values()]);
  const rows = utf8Lines(kept.map((p) => p.rows));
  const facts = utf8Lines(kept.map((p) => [...factLines('v', p.visitors), ...factLines('s', p.sessions)]));
  return {
    lines: checked.length,
    rows: rows.bytes,
    accepted,
    rejected,
    domains,
    partitions: kept.map((p, i) => {
      const dt = new Date(p.day * DAY_MS).toISOString().slice(0, 10);
      return {
        key: `${p.domain}/${dt}`,
        domain: p.domain,
        dt,
        rows: p.rows.length,
        rowsEnd: rows.ends[i]!,
        factsEnd: facts.ends[i]!,
      };
    }),
    facts: facts.bytes,
  };
}

/** One JSON object per id, `{"<key>":<id>}` (CheckedBatch.facts). */
function factLines(key: 'v' | 's', ids: Set<string>): string[] {
  return [...ids].map((id) => `{"${key}":${JSON.stringify(id)}}`);
}

interface PartitionRows {
  domain: string;
  day: number;
  rows: string[];
  visitors: Set<string>;
  sessions: Set<string>;
}

/**
 * Groups of lines as UTF-8, each line followed by LF, in a buffer of their own (transferable to another thread),
 * with where each group ends. Each line is written in place: joining them first and encoding the joined text costs
 * a third more.
 */
function utf8Lines(groups: string[][]): { bytes: Uint8Array; ends: number[] } {
  let size = 0;
  for (const lines of groups) for (const line of lines) size += Buffer.byteLength(line) + 1;
  const bytes = Buffer.allocUnsafeSlow(size);
  const ends: number[] = [];
  let at = 0;
  for (const lines of groups) {
    for (const line of lines) {
      at += bytes.write(line, at);
      bytes[at++] = 0x0a;
    }
    ends.push(at);
  }
  return { bytes, ends };
}

/** Checks blocks of a file; `check` resolves in the order blocks were given, whatever thread ran them. */
export interface BlockChecker {
  check(block: LineBlock): Promise<CheckedBatch>;
  close(): Promise<void>;
}

export const inThreadChecker: BlockChecker = {
  check: async (block) => checkLines(linesOfBlock(block)),
  close: async () => {},
};

/**
 * `count` worker threads (default: one per core), or undefined where workers cannot load this module's source
 * (a bundle, or no tsx to load TypeScript with): the caller then checks on its own thread.
 */
export function workerChecker(count = availableParallelism()): BlockChecker | undefined {
  const entry = new URL('./check-worker.ts', import.meta.url);
  const tsxApi = tsxEsmApi();
  if (!import.meta.url.endsWith('.ts') || !tsxApi || count < 1) return undefined;
  const boot = `import { register } from ${JSON.stringify(tsxApi)}; register(); await import(${JSON.stringify(entry.href)});`;
  const workers = Array.from(
    { length: count },
    () => new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`)),
  );
  const waiting = new Map<number, { resolve: (batch: CheckedBatch) => void; reject: (error: Error) => void }>();
  let failure: Error | undefined;
  const fail = (error: Error) => {
    failure ??= error;
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  for (const worker of workers) {
    worker.on('message', ({ id, batch }: { id: number; batch: CheckedBatch }) => {
      waiting.get(id)?.resolve(batch);
      waiting.delete(id);
    });
    worker.on('error', fail);
    worker.on('exit', (code) => code !== 0 && fail(new Error(`an import check worker stopped with code ${code}`)));
  }
  let next = 0;
  return {
    check(block) {
      if (failure) return Promise.reject(failure);
      const id = next++;
      return new Promise<CheckedBatch>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        workers[id % workers.length]!.postMessage({ id, block } satisfies BlockMessage);
      });
    },
    async close() {
      await Promise.all(workers.map((worker) => worker.terminate()));
    },
  };
}

/** What a worker is sent (writer/check-worker.ts). */
export interface BlockMessage {
  id: number;
  block: LineBlock;
}

/** The URL of tsx's ESM API (its `register` loads TypeScript in a worker), from its package's exports. */
function tsxEsmApi(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const manifest = require.resolve('tsx/package.json');
    const exported = (require(manifest) as { exports: Record<string, { import?: { default?: string } }> }).exports[
      './esm/api'
    ]?.import?.default;
    return exported ? pathToFileURL(join(dirname(manifest), exported)).href : undefined;
  } catch {
    return undefined;
  }
}

/** The checked batches of a file's blocks, in order; up to two blocks per worker are in flight, so reading overlaps checking. */
export async function* checkedBlocks(
  blocks: AsyncIterable<LineBlock>,
  checker: BlockChecker,
): AsyncGenerator<CheckedBatch> {
  const inFlight: Promise<CheckedBatch>[] = [];
  const depth = checker === inThreadChecker ? 1 : 2 * availableParallelism();
  for await (const block of blocks) {
    inFlight.push(handled(checker.check(block)));
    if (inFlight.length >= depth) yield await inFlight.shift()!;
  }
  while (inFlight.length) yield await inFlight.shift()!;
}

/** The checked batches of lines from any source, `batchLines` at a time, on this thread; a byte-order mark opening the first line is dropped. */
export async function* checkedLines(lines: AsyncIterable<string>, batchLines = 4096): AsyncGenerator<CheckedBatch> {
  let batch: string[] = [];
  let first = true;
  for await (const line of lines) {
    batch.push(first ? line.replace(/^\uFEFF/, '') : line);
    first = false;
    if (batch.length < batchLines) continue;
    yield checkLines(batch);
    batch = [];
  }
  if (batch.length) yield checkLines(batch);
}

/** The same promise, marked handled: a failure of a block behind a failed one is not an unhandled rejection. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
