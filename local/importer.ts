import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
} from '@duckdb/node-api';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { duckdbTypes, eventColumns } from '../shared/events/event-columns.js';
import { checkEvent, checkEventLine, type CheckedEvent, type StoredEvent } from '../shared/events/event-validation.js';
import { recordImportedEvents } from '../shared/limits/limiter.js';
import { parquetFilesUnder, type LocalPaths } from './paths.js';
import { localCodec, parquetCopyOptions, S3_CODEC, type ParquetCodec } from './parquet-codec.js';
import { writeDerived } from './derived-writer.js';
import { deriveMissing } from './backfill-derived.js';
import { withStoreLock } from './store-lock.js';
import { keyVisitors } from './visitor-keys.js';
import { markWholeFragments } from './whole-fragments.js';

// Imports events into the Parquet layout of event-format.md §2. Valid rows are appended to in-memory DuckDB
// tables, one per (domain, dt); every `batchRows` rows each table becomes one ts-ordered Parquet file (local/parquet-codec.ts) in a
// staging folder. Only when the whole input was read are the files renamed into the events folder, so readers
// never see half an import and a fatal error leaves nothing behind. Next to each event file go its derived files
// (session fragments, pageview buckets: same relative name under their folders, docs/STORAGE.md), published
// right after the events.

export interface ImportReport {
  rowsWritten: number;
  rejected: { line: number; reason: string }[];
  domains: Record<string, number>;
  files: number;
}

export interface ImportOptions {
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /** Where the staged files go once the whole input was read; by default, renamed into the events folder. */
  publish?: Publisher;
  /** Where the staged derived files of each folder go, after the events; required with `publish`. */
  publishDerived?: Record<DerivedFolder, Publisher>;
  /** Rows per batch (one file per partition and batch); large enough for few files, small enough for flat memory. */
  batchRows?: number;
}

export type Publisher = (stagingDir: string, files: string[]) => Promise<void>;

const DEFAULT_BATCH_ROWS = 100_000;
/** Each open partition holds an appender buffer (~1 MB); unsorted input flushes early rather than grow memory. */
const MAX_OPEN_PARTITIONS = 128;

/** Imports an NDJSON file, streamed line by line. Rejected lines are reported; unreadable input is a fatal error. */
export async function importNdjson(file: string, paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  const totalBytes = (await stat(file)).size;
  return importLines(readLines(file, (bytesRead) => options.onProgress?.(bytesRead, totalBytes)), paths, options);
}

// The stream opens when iteration starts, so a read error rejects the iteration instead of going unhandled.
async function* readLines(file: string, onRead: (bytesRead: number) => void): AsyncGenerator<string> {
  const stream = createReadStream(file);
  stream.on('data', () => onRead(stream.bytesRead));
  try {
    yield* createInterface({ input: stream, crlfDelay: Infinity });
  } finally {
    stream.destroy();
  }
}

/** Imports NDJSON lines from any source; an error thrown by the source aborts the import with nothing written. */
export async function importLines(lines: AsyncIterable<string>, paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  async function* checked() {
    let first = true;
    for await (const line of lines) {
      yield checkEventLine(first ? line.replace(/^\uFEFF/, '') : line);
      first = false;
    }
  }
  return importChecked(checked(), paths, options);
}

/** Imports events given as objects (tests, the demo); the line of event i is i + 1. */
export async function importEvents(events: unknown[], paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  return importChecked(events.map(checkEvent), paths, options);
}

async function importChecked(
  events: AsyncIterable<CheckedEvent | null> | Iterable<CheckedEvent | null>,
  paths: LocalPaths,
  options: ImportOptions,
): Promise<ImportReport> {
  if (options.publish && !options.publishDerived) throw new Error('publish needs publishDerived: events and their derived files go together');
  const importId = `${new Date().toISOString().replace(/[-:.]/g, '')}-${randomBytes(4).toString('hex')}`;
  const stagingDir = join(paths.stagingDir, importId);
  const derivedStagingDirs = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(paths.stagingDir, `${importId}-${r.folder}`)])) as Record<DerivedFolder, string>;
  const report: ImportReport = { rowsWritten: 0, rejected: [], domains: {}, files: 0 };
  const writer = await BatchWriter.open(stagingDir, derivedStagingDirs, importId, options.publish ? S3_CODEC : localCodec());
  try {
    await mkdir(stagingDir, { recursive: true });
    let line = 0;
    for await (const checked of events) {
      line += 1;
      if (checked === null) continue;
      if (!checked.ok) {
        report.rejected.push({ line, reason: checked.reason });
        continue;
      }
      await writer.append(checked.event);
      report.domains[checked.event.domain] = (report.domains[checked.event.domain] ?? 0) + 1;
      report.rowsWritten += 1;
      if (writer.bufferedRows >= (options.batchRows ?? DEFAULT_BATCH_ROWS)) await writer.flush();
    }
    await writer.flush();
    const files = parquetFilesUnder(stagingDir);
    const publishAll = async () => {
      await (options.publish ?? ((dir, names) => moveInto(dir, names, paths.eventsDir)))(stagingDir, files);
      for (const { folder } of derivedRelations) {
        const publishDerived = options.publishDerived?.[folder] ?? ((dir, names) => moveInto(dir, names, paths.derivedDirs[folder]));
        await publishDerived(derivedStagingDirs[folder], parquetFilesUnder(derivedStagingDirs[folder]));
      }
    };
    if (options.publish) await publishAll();
    else {
      // Locally, the staged buckets get their visitor keys and whole fragments are marked around the publish
      // (local/visitor-keys.ts, local/whole-fragments.ts explain why under the lock and in this order).
      await withStoreLock(paths, async () => {
        // A store written by an older version is brought up to date first, as the backfill would (once: then
        // it finds nothing to do), so no fragment is marked whole without its paths.
        if (await deriveMissing(paths)) await markWholeFragments(paths);
        const domains = Object.keys(report.domains);
        await keyVisitors(paths, { pending: derivedStagingDirs, domains });
        await markWholeFragments(paths, { pendingDir: derivedStagingDirs.sessions, domains });
        await publishAll();
        await markWholeFragments(paths, { domains });
      });
    }
    report.files = files.length;
  } finally {
    writer.close();
    await rm(stagingDir, { recursive: true, force: true });
    for (const dir of Object.values(derivedStagingDirs)) await rm(dir, { recursive: true, force: true });
  }
  for (const [domain, count] of Object.entries(report.domains)) await recordImportedEvents(domain, count);
  return report;
}

/** One DuckDB table per (domain, dt) of the current batch, so writing a partition never scans the others. */
class BatchWriter {
  bufferedRows = 0;
  private partitions = new Map<string, { domain: string; dt: string; table: string; appender: DuckDBAppender }>();
  private tableCount = 0;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly stagingDir: string,
    private readonly derivedStagingDirs: Record<DerivedFolder, string>,
    private readonly importId: string,
    private readonly codec: ParquetCodec,
  ) {}

  static async open(stagingDir: string, derivedStagingDirs: Record<DerivedFolder, string>, importId: string, codec: ParquetCodec): Promise<BatchWriter> {
    const instance = await DuckDBInstance.create(':memory:', { threads: String(process.env.DUCKDB_THREADS ?? 2) });
    try {
      return new BatchWriter(instance, await instance.connect(), stagingDir, derivedStagingDirs, importId, codec);
    } catch (error) {
      instance.closeSync();
      throw error;
    }
  }

  async append(event: StoredEvent): Promise<void> {
    const dt = new Date(event.ts).toISOString().slice(0, 10);
    const key = `${event.domain}/${dt}`;
    let partition = this.partitions.get(key);
    if (!partition) {
      if (this.partitions.size >= MAX_OPEN_PARTITIONS) await this.flush();
      const table = `partition_${++this.tableCount}`;
      await this.connection.run(`CREATE TABLE ${table} (${eventColumns.map(([name, type]) => `${name} ${duckdbTypes[type]}`).join(', ')})`);
      partition = { domain: event.domain, dt, table, appender: await this.connection.createAppender(table) };
      this.partitions.set(key, partition);
    }
    const appender = partition.appender;
    for (const [name, type] of eventColumns) {
      const value = event[name];
      if (value === null) appender.appendNull();
      else if (type === 'timestamp') appender.appendTimestamp(new DuckDBTimestampValue(BigInt(value as number) * 1000n));
      else if (type === 'string') appender.appendVarchar(value as string);
      else if (type === 'double') appender.appendDouble(value as number);
      else if (type === 'bigint') appender.appendBigInt(BigInt(value as number));
      else appender.appendBoolean(value as boolean);
    }
    appender.endRow();
    this.bufferedRows += 1;
  }

  /**
   * Writes each partition of the batch as one file ordered by ts (COPY ... PARTITION_BY would not keep the order),
   * and the derived files of exactly those rows under the same relative name.
   */
  async flush(): Promise<void> {
    for (const { domain, dt, table, appender } of this.partitions.values()) {
      appender.closeSync();
      const name = join(`domain=${domain}`, `dt=${dt}`, `${this.importId}-${table}.parquet`);
      const file = join(this.stagingDir, name);
      await mkdir(dirname(file), { recursive: true });
      await this.connection.run(`COPY (SELECT * FROM ${table} ORDER BY ts) TO ${pathLiteral(file)} ${parquetCopyOptions(this.codec)}`);
      await writeDerived(this.connection, table, name, this.derivedStagingDirs, this.codec);
      await this.connection.run(`DROP TABLE ${table}`);
    }
    this.partitions.clear();
    this.bufferedRows = 0;
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** Moves every staged file to the same relative place under the events folder (a rename: never half a file). */
async function moveInto(stagingDir: string, files: string[], eventsDir: string): Promise<void> {
  for (const name of files) {
    const target = join(eventsDir, name);
    await mkdir(dirname(target), { recursive: true });
    await rename(join(stagingDir, name), target);
  }
}
