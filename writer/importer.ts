import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { openScratchDuckDb, type ScratchDuckDb } from './scratch-duckdb.js';
import { pathLiteral } from '../shared/engines/duckdb-engine.js';
import { duckdbTypes, eventColumns } from '../shared/events/event-columns.js';
import { daysOfFiles, readDomainDays, widenDomainDays, type DomainDays } from '../shared/store/domain-days-repo.js';
import { readFileStates, recordLayout } from '../shared/store/file-states-repo.js';
import { STORE_LAYOUT } from '../shared/events/store-layout.js';
import type { StoreCodecs } from './parquet-codec.js';
import { eventFileCopyOptions, eventFileOrder, type EventFileStore } from './event-file-layout.js';
import { writeDerived } from './derived-writer.js';
import { fileDigest, readLineBlocks, type LineBlock } from './ndjson-lines.js';
import {
  checkedBlocks,
  checkedLines,
  checkEventBatch,
  inThreadChecker,
  MAX_STORED_ROW_BYTES,
  workerChecker,
  type BlockChecker,
  type CheckedBatch,
} from './checked-batches.js';
import type { ImportDestination, ImportRecord, VisitorKeySource } from './destination.js';

// Imports events into the store's Parquet layout (docs/EVENT-FORMAT.md). Lines are checked in batches (on worker
// threads for a large input, writer/checked-batches.ts); accepted rows are appended to a staging NDJSON file of their
// partition. Once the whole input was read, each (domain, dt) partition the import touched is written as one event
// file (rows in the order of writer/event-file-layout.ts) with its derived files (docs/STORAGE.md), so the files an
// import writes grow with its partitions whatever the order of its lines. The files are then handed to the import's
// destination (writer/destination.ts), which publishes them visible whole or not at all. An import is identified by
// the digest of its input: the same input a second time adds nothing.

export interface ImportReport {
  rowsWritten: number;
  /** The valid rows of the input, whether written now or by the earlier import of the same input. */
  rowsAccepted: number;
  rejected: { line: number; reason: string }[];
  domains: Record<string, number>;
  files: number;
  /** True when this input was imported before: nothing was written or counted again. */
  alreadyImported: boolean;
}

export interface ImportOptions {
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /** Told how long each stage took (`npm run bench:import`): read and check, write partitions, publish; the import goes on once it returns. */
  onStage?: (stage: ImportStage, ms: number) => void | Promise<void>;
  /** Lines per checked batch (importLines, importEvents; at most 4096): how often rows are appended to the staged files. */
  batchRows?: number;
  /** Threads checking lines (importNdjson): by default one per core for an input of 8 MB or more, else none. */
  checkWorkers?: number;
}

export type ImportStage = 'read and check' | 'write partitions' | 'publish';

/** Lines per checked batch of lines or events. */
const DEFAULT_BATCH_ROWS = 4096;
/**
 * A batch with rows of more partitions than this has its parts held (PartitionWriter.stage), up to HELD_BYTES in
 * all. Holding the parts of every batch made the usual import, a partition or two per batch, slower.
 */
const HOLD_FROM_PARTITIONS = 8;
const HELD_BYTES = 16 * 2 ** 20;
const WORKERS_FROM_BYTES = 8 * 2 ** 20;

/** Imports an NDJSON file, streamed line by line. Rejected lines are reported; unreadable input is a fatal error. */
export async function importNdjson(
  file: string,
  destination: ImportDestination,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const totalBytes = (await stat(file)).size;
  const digest = await fileDigest(file);
  if (await destination.importedBefore(digest)) return alreadyImportedReport();
  const blocks = readLineBlocks(file, (bytesRead) => options.onProgress?.(bytesRead, totalBytes));
  const workers = options.checkWorkers ?? (totalBytes >= WORKERS_FROM_BYTES ? availableParallelism() : 0);
  return withChecker(workers, (checker) =>
    importChecked(checkedBlocks(blocks, checker), destination, options, { digest, source: basename(file) }),
  );
}

/**
 * Imports NDJSON given as blocks of bytes, each ending at the end of a line: as `importNdjson` reads a file, checked
 * on `checkWorkers` threads (default one per core). The bench generates its data sets this way.
 */
export async function importLineBlocks(
  blocks: AsyncIterable<Uint8Array>,
  destination: ImportDestination,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const hash = createHash('sha256');
  async function* hashed(): AsyncGenerator<LineBlock> {
    for await (const bytes of blocks) {
      hash.update(bytes);
      yield { bytes };
    }
  }
  return withChecker(options.checkWorkers ?? availableParallelism(), (checker) =>
    importChecked(checkedBlocks(hashed(), checker), destination, options, {
      digest: () => hash.digest('hex'),
      source: 'lines',
    }),
  );
}

/** Runs `use` with `workers` checking threads (none: this thread's checks), closed after. */
async function withChecker<T>(workers: number, use: (checker: BlockChecker) => Promise<T>): Promise<T> {
  const checker = workers > 0 ? workerChecker(workers) : undefined;
  try {
    return await use(checker ?? inThreadChecker);
  } finally {
    await checker?.close();
  }
}

/** Imports NDJSON lines from any source; an error thrown by the source aborts the import with nothing written. */
export async function importLines(
  lines: AsyncIterable<string>,
  destination: ImportDestination,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const hash = createHash('sha256');
  async function* hashed() {
    for await (const line of lines) {
      hash.update(line).update('\n');
      yield line;
    }
  }
  return importChecked(checkedLines(hashed(), batchLines(options)), destination, options, {
    digest: () => hash.digest('hex'),
    source: 'lines',
  });
}

/** Imports events given as objects (tests, the demo); the line of event i is i + 1. */
export async function importEvents(
  events: unknown[],
  destination: ImportDestination,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const hash = createHash('sha256');
  for (const event of events) hash.update(JSON.stringify(event) ?? 'undefined').update('\n');
  const size = batchLines(options);
  const batches = Array.from({ length: Math.ceil(events.length / size) }, (_, i) =>
    checkEventBatch(events.slice(i * size, (i + 1) * size)),
  );
  return importChecked(batches, destination, options, { digest: hash.digest('hex'), source: 'events' });
}

function batchLines(options: ImportOptions): number {
  return Math.max(1, Math.min(DEFAULT_BATCH_ROWS, options.batchRows ?? DEFAULT_BATCH_ROWS));
}

interface InputIdentity {
  /** The input's digest, or a function giving it once the input was read. */
  digest: string | (() => string);
  source: string;
}

async function importChecked(
  batches: AsyncIterable<CheckedBatch> | Iterable<CheckedBatch>,
  destination: ImportDestination,
  options: ImportOptions,
  identity: InputIdentity,
): Promise<ImportReport> {
  // Named `<pid>-...`: the local store removes the staging entries of processes no longer running.
  const staging = join(destination.stagingDir, `${process.pid}-import-${randomBytes(6).toString('hex')}`);
  const eventsStaging = join(staging, 'events');
  const derivedStaging = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(staging, r.folder)])) as Record<
    DerivedFolder,
    string
  >;
  const report: ImportReport = {
    rowsWritten: 0,
    rowsAccepted: 0,
    rejected: [],
    domains: {},
    files: 0,
    alreadyImported: false,
  };
  await mkdir(staging, { recursive: true });
  const writer = await PartitionWriter.open(join(staging, 'partitions'), destination.store, destination.codecs);
  let stageStart = performance.now();
  const stageDone = async (stage: ImportStage) => {
    await options.onStage?.(stage, performance.now() - stageStart);
    stageStart = performance.now();
  };
  try {
    let linesBefore = 0;
    for await (const batch of batches) {
      for (const { line, reason } of batch.rejected) report.rejected.push({ line: linesBefore + line, reason });
      linesBefore += batch.lines;
      for (const [domain, rows] of Object.entries(batch.domains))
        report.domains[domain] = (report.domains[domain] ?? 0) + rows;
      report.rowsWritten += batch.accepted;
      report.rowsAccepted += batch.accepted;
      await writer.add(batch);
    }
    const digest = typeof identity.digest === 'string' ? identity.digest : identity.digest();
    const fileName = destination.fileName(digest);
    if (await destination.settleImported(digest, writer.partitionFiles(fileName), Object.keys(report.domains))) {
      return alreadyImportedReport(report.rejected, report.rowsAccepted);
    }
    await stageDone('read and check');
    const files = await writer.writePartitions(eventsStaging, derivedStaging, fileName, destination.visitorKeys);
    await stageDone('write partitions');
    // The days of every file are recorded before any file is published, so all-time reads bounded by them
    // (shared/store/domain-days-repo.ts) always cover what they can see. A domain without a record may have files
    // from before records existed: their days are recorded first.
    for (const [domain, days] of daysOfFiles(files)) {
      let stored: DomainDays | undefined | null = null;
      if (!(await readDomainDays(domain))) {
        stored = await destination.storedDays(domain);
        if (stored) await widenDomainDays(domain, stored.firstDay, stored.lastDay);
      }
      await widenDomainDays(domain, days.firstDay, days.lastDay);
      // This import's files are at the current layout: a domain's files all are when it had none before. Recorded
      // before publishing, so readers plan with every column (shared/events/store-layout.ts). (The local store
      // records its domains' layout as it publishes: its transaction upgrades every file.)
      if (destination.store === 'local' || (await readFileStates(domain)).layout >= STORE_LAYOUT) continue;
      if ((stored === null ? await destination.storedDays(domain) : stored) === undefined)
        await recordLayout(domain, STORE_LAYOUT);
    }
    const record: ImportRecord = {
      digest,
      source: identity.source,
      at: new Date().toISOString(),
      rows: report.rowsWritten,
      domains: report.domains,
    };
    const published = await destination.publish(
      { eventsDir: eventsStaging, derivedDirs: derivedStaging, files, record },
      writer.keyFingerprints,
    );
    await stageDone('publish');
    if (!published) return alreadyImportedReport(report.rejected, report.rowsAccepted);
    report.files = files.length;
    return report;
  } finally {
    await writer.close();
    await rm(staging, { recursive: true, force: true });
  }
}

function alreadyImportedReport(rejected: ImportReport['rejected'] = [], rowsAccepted = 0): ImportReport {
  return { rowsWritten: 0, rowsAccepted, rejected, domains: {}, files: 0, alreadyImported: true };
}

/**
 * Collects accepted rows in a staging NDJSON file per partition (and beside it the partition's facts, CheckedBatch),
 * appended in input order. Once the whole input was read, each partition is written once: DuckDB reads its file,
 * sorts it and writes the event file and its derived files. Rows stay JSON until then: converting them to Parquet on
 * the way (read back once per partition) cost more than reading each partition's JSON once.
 */
class PartitionWriter {
  private readonly partitions = new Map<string, { domain: string; dt: string; rowsFile: string; factsFile: string }>();
  private rowsAdded = 0;
  /** Small parts of batches not yet appended to their staged files, per file (stage). */
  private readonly held = new Map<string, Uint8Array[]>();
  private heldBytes = 0;
  /** Per domain, the fingerprint of the keyed files its keys were given from (VisitorKeySource). */
  readonly keyFingerprints = new Map<string, string>();

  private constructor(
    private readonly scratch: ScratchDuckDb,
    private readonly stagingDir: string,
    private readonly store: EventFileStore,
    private readonly codecs: StoreCodecs,
  ) {}

  private get connection(): DuckDBConnection {
    return this.scratch.connection;
  }

  /** A writer of files laid out for `store` in `codecs`, staging rows under `stagingDir`. */
  static async open(stagingDir: string, store: EventFileStore, codecs: StoreCodecs): Promise<PartitionWriter> {
    await mkdir(stagingDir, { recursive: true });
    return new PartitionWriter(await openScratchDuckDb(), stagingDir, store, codecs);
  }

  async add(batch: CheckedBatch): Promise<void> {
    const hold = batch.partitions.length > HOLD_FROM_PARTITIONS;
    let rowsFrom = 0;
    let factsFrom = 0;
    for (const { key, domain, dt, rows, rowsEnd, factsEnd } of batch.partitions) {
      let partition = this.partitions.get(key);
      if (!partition) {
        // Numbered, not named after the domain: a long domain's name must not make a file name too long.
        const name = join(this.stagingDir, String(this.partitions.size));
        partition = { domain, dt, rowsFile: `${name}.ndjson`, factsFile: `${name}.facts.ndjson` };
        // Files bound for S3 need no facts (writePartitions). A local partition's facts file exists from the start,
        // whatever its batches hold: writePartitions reads every one named; its rows file gets every batch's rows.
        if (this.store === 'local') await writeFile(partition.factsFile, '');
        this.partitions.set(key, partition);
      }
      await this.stage(partition.rowsFile, batch.rows.subarray(rowsFrom, rowsEnd), hold);
      if (this.store === 'local')
        await this.stage(partition.factsFile, batch.facts.subarray(factsFrom, factsEnd), hold);
      this.rowsAdded += rows;
      rowsFrom = rowsEnd;
      factsFrom = factsEnd;
    }
    if (this.heldBytes >= HELD_BYTES) await this.writeHeld();
  }

  /**
   * Appends a batch's bytes for one staged file: at once, or with `hold` (a batch of many partitions) copied and
   * held with other such parts until HELD_BYTES are held, so an input that interleaves many partitions is not
   * written a few rows at a time. A file's held bytes go before any later ones: its rows stay in input order.
   */
  private async stage(file: string, bytes: Uint8Array, hold: boolean): Promise<void> {
    if (bytes.length === 0) return;
    const held = this.held.get(file);
    if (hold) {
      const copy = Buffer.from(bytes); // a copy: a small part must not keep its whole batch in memory
      if (held) held.push(copy);
      else this.held.set(file, [copy]);
      this.heldBytes += bytes.length;
      return;
    }
    if (held) {
      this.held.delete(file);
      for (const part of held) this.heldBytes -= part.length;
    }
    await appendFile(file, held ? Buffer.concat([...held, bytes]) : bytes);
  }

  private async writeHeld(): Promise<void> {
    for (const [file, parts] of this.held) await appendFile(file, Buffer.concat(parts));
    this.held.clear();
    this.heldBytes = 0;
  }

  /**
   * Writes one event file per partition under `eventsDir` and its derived files under `derivedDirs`,
   * all named `domain=<d>/dt=<day>/<import name>.parquet`; returns the event files' relative names. With `keys`
   * the buckets are keyed from them and the fragments marked by the import's own rows (WriterKnowledge); without,
   * neither.
   */
  async writePartitions(
    eventsDir: string,
    derivedDirs: Record<DerivedFolder, string>,
    fileName = `${stagingNameStamp()}.parquet`,
    keys?: VisitorKeySource,
  ): Promise<string[]> {
    await this.writeHeld();
    if (this.rowsAdded === 0) return [];
    const known = keys ? { visitorKeys: 'part_keys', splitSessions: 'import_split' } : undefined;
    const connection = this.connection;
    // A second connection writes some of each partition's files: the tables below are the database's, not
    // temporary ones, so both connections read them.
    const other = await this.scratch.connect();
    const partitions = [...this.partitions.values()].sort((a, b) => (a.domain + a.dt < b.domain + b.dt ? -1 : 1));
    const files: string[] = [];
    let rowsWritten = 0;
    let knownDomain: string | undefined;
    for (const { domain, dt, rowsFile } of partitions) {
      if (keys && domain !== knownDomain) {
        // The visitors to key, and the sessions in two of the import's partitions (their fragments there are not
        // whole; writeDerived finds the sessions with two fragments in one file), from the domain's facts.
        const facts = factsOf(partitions.filter((p) => p.domain === domain).map((p) => p.factsFile));
        await connection.run(
          `CREATE OR REPLACE TABLE import_visitors AS SELECT DISTINCT v AS visitor_id FROM ${facts} WHERE v IS NOT NULL`,
        );
        await connection.run(
          `CREATE OR REPLACE TABLE import_split AS SELECT s AS session_id FROM ${facts} WHERE s IS NOT NULL GROUP BY s HAVING count(DISTINCT filename) > 1`,
        );
        this.keyFingerprints.set(domain, await keys.before(connection, domain, 'import_visitors', 'import_keys'));
        knownDomain = domain;
      }
      await connection.run(`CREATE OR REPLACE TABLE part AS ${storedRowsOf(rowsFile)} ORDER BY ${eventFileOrder}`);
      rowsWritten += Number((await connection.runAndReadAll('SELECT count(*) FROM part')).getRows()[0]![0]);
      // The keys of this partition's visitors only: each bucket file joins a table of its own size.
      if (keys)
        await connection.run(
          `CREATE OR REPLACE TABLE part_keys AS SELECT * FROM import_keys WHERE visitor_id IN (SELECT visitor_id FROM part)`,
        );
      const name = join(`domain=${domain}`, `dt=${dt}`, fileName);
      await mkdir(dirname(join(eventsDir, name)), { recursive: true });
      // The event file and the fragments on this connection, the other derived files on a second one at the same
      // time: one statement at a time kept the two cores about 1.7 busy. Both are awaited before anything else
      // runs, even when one fails, so no statement is left running on a connection about to close.
      const written = await Promise.allSettled([
        (async () => {
          await connection.run(
            `COPY part TO ${pathLiteral(join(eventsDir, name))} ${eventFileCopyOptions(this.codecs.events, this.store, this.codecs.zstdLevel)}`,
          );
          await writeDerived(connection, 'part', name, derivedDirs, this.codecs, { known, only: ['sessions'] });
        })(),
        writeDerived(other, 'part', name, derivedDirs, this.codecs, {
          known,
          only: ['pageviews', 'pages', 'visitors', 'custom_events'],
        }),
      ]);
      for (const result of written) if (result.status === 'rejected') throw result.reason;
      files.push(name);
    }
    // Every partition's rows were read from a file named here: a row in no such file would be lost silently.
    if (rowsWritten !== this.rowsAdded)
      throw new Error(`an import wrote ${rowsWritten} rows of the ${this.rowsAdded} it accepted`);
    return files;
  }

  /** The relative names writePartitions gives the event files of this import, without writing them. */
  partitionFiles(fileName: string | undefined): string[] {
    return fileName === undefined
      ? []
      : [...this.partitions.values()].map(({ domain, dt }) => join(`domain=${domain}`, `dt=${dt}`, fileName));
  }

  async close(): Promise<void> {
    this.scratch.close();
  }
}

/**
 * The facts of a domain's partitions (CheckedBatch.facts) in their staging files, with each fact's file name: a
 * session named in two files lies in two partitions.
 */
function factsOf(files: string[]): string {
  return `read_json([${files.map(pathLiteral).join(', ')}], format = 'newline_delimited', columns = {v: 'VARCHAR', s: 'VARCHAR'}, filename = true)`;
}

/**
 * The stored rows of a staging NDJSON file (CheckedBatch.rows), their event columns only. Every key is read with
 * its exact type; `ts` comes as epoch milliseconds. The object size bound is twice the largest row kept
 * (MAX_STORED_ROW_BYTES): a bound far above the rows makes DuckDB's JSON reader slower.
 */
function storedRowsOf(file: string): string {
  const columns = eventColumns.map(([name, type]) => [name, name === 'ts' ? 'BIGINT' : duckdbTypes[type]]);
  const columnTypes = columns.map(([name, type]) => `${name}: '${type}'`).join(', ');
  const maxObject = 2 * MAX_STORED_ROW_BYTES;
  const read = `read_json(${pathLiteral(file)}, format = 'newline_delimited', maximum_object_size = ${maxObject}, columns = {${columnTypes}})`;
  const values = eventColumns.map(([name]) => (name === 'ts' ? 'epoch_ms(ts) AS ts' : name));
  return `SELECT ${values.join(', ')} FROM ${read}`;
}

/** A file name no other import's can equal: its time, then random bits. */
function stagingNameStamp(): string {
  return `${new Date().toISOString().replace(/[-:.]/g, '')}-${randomBytes(6).toString('hex')}`;
}
