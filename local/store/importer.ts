import { createHash, randomBytes } from 'node:crypto';
import { appendFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { openScratchDuckDb, type ScratchDuckDb } from './scratch-duckdb.js';
import { pathLiteral } from '../../shared/engines/duckdb-engine.js';
import { duckdbTypes, eventColumns } from '../../shared/events/event-columns.js';
import { forgetImportCount, recordImportedEventsOnce } from '../../shared/limits/limiter.js';
import { parquetFilesUnder, pathsOfSnapshot, type LocalPaths } from './paths.js';
import { currentSnapshot, snapshotLayout } from './snapshots.js';
import { localCodecs, S3_CODECS, type StoreCodecs } from './parquet-codec.js';
import { eventFileCopyOptions, eventFileOrder, type EventFileStore } from './event-file-layout.js';
import { writeDerived } from './derived-writer.js';
import { deriveMissing } from './backfill.js';
import { fileDigest, readLineBlocks, type LineBlock } from './ndjson-lines.js';
import { checkedBlocks, checkedLines, checkEventBatch, inThreadChecker, MAX_STORED_ROW_BYTES, workerChecker, type BlockChecker, type CheckedBatch } from './checked-batches.js';
import { hasImportRecord, recordUsage, writeImportRecord, type ImportRecord } from './imports.js';
import { daysOfFiles, readDomainDays, widenDomainDays, type DomainDays } from '../../shared/store/domain-days-repo.js';
import { storedDaysOf } from './store-days.js';
import { stagingName, withStoreTransaction } from './local-store.js';
import { keysBeforeLock, keysStillHold, keyVisitors } from './visitor-keys.js';
import { markWholeFragments } from './whole-fragments.js';

// Imports events into the store's Parquet layout (docs/EVENT-FORMAT.md). Lines are checked in batches (on worker
// threads for a large input, store/checked-batches.ts); accepted rows are appended to a staging NDJSON file of their
// partition. Once the whole input was read, each (domain, dt) partition the import touched is written as one event
// file (rows in the order of store/event-file-layout.ts) with its derived files (docs/STORAGE.md), so the files an
// import writes grow with its partitions whatever the order of its lines. The files are then published in one store
// transaction (store/local-store.ts): visible whole or not at all. An import is identified by the digest of its input
// (store/imports.ts): the same input a second time adds nothing.

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
  /** Where the staged files go once the whole input was read; by default, the local store. */
  publish?: Publisher;
  /** Where the staged derived files of each folder go, before the events; required with `publish`. */
  publishDerived?: Record<DerivedFolder, Publisher>;
  /**
   * With `publish`: the destination's import records. An input whose record exists is not written again; files
   * are named after the input's digest, so a retry after a crash midway overwrites what it had written rather
   * than adding copies, and the record is written last, once every file is up and the usage counted.
   */
  publishedImports?: { has(digest: string): Promise<boolean>; record(record: ImportRecord): Promise<void> };
  /**
   * With `publish`: hides each domain's files (`dt=<day>/<file>`) from queries before the first upload and shows
   * them after the last, so queries see an import whole or not at all (shared/store/file-states-repo.ts).
   */
  visibility?: { hide(domain: string, files: string[]): Promise<void>; show(domain: string, files: string[]): Promise<void> };
  /** With `publish`: the days a domain already has files in at the destination (written before days were recorded). */
  storedDays?: (domain: string) => Promise<DomainDays | undefined>;
  /** Told how long each stage took (`npm run bench:import`): read and check, write partitions, publish; the import goes on once it returns. */
  onStage?: (stage: ImportStage, ms: number) => void | Promise<void>;
  /** Lines per checked batch (importLines, importEvents; at most 4096): how often rows are appended to the staged files. */
  batchRows?: number;
  /** Threads checking lines (importNdjson): by default one per core for an input of 8 MB or more, else none. */
  checkWorkers?: number;
}

export type Publisher = (stagingDir: string, files: string[]) => Promise<void>;

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
export async function importNdjson(file: string, paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  const totalBytes = (await stat(file)).size;
  const digest = await fileDigest(file);
  // The current snapshot's paths: a record there means the same input was imported before.
  if (!options.publish && hasImportRecord(paths, digest)) {
    await recordUsage(paths);
    return alreadyImportedReport();
  }
  const blocks = readLineBlocks(file, (bytesRead) => options.onProgress?.(bytesRead, totalBytes));
  const workers = options.checkWorkers ?? (totalBytes >= WORKERS_FROM_BYTES ? availableParallelism() : 0);
  return withChecker(workers, (checker) => importChecked(checkedBlocks(blocks, checker), paths, options, { digest, source: basename(file) }));
}

/**
 * Imports NDJSON given as blocks of bytes, each ending at the end of a line: as `importNdjson` reads a file, checked
 * on `checkWorkers` threads (default one per core). The bench generates its data sets this way.
 */
export async function importLineBlocks(blocks: AsyncIterable<Uint8Array>, paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  const hash = createHash('sha256');
  async function* hashed(): AsyncGenerator<LineBlock> {
    for await (const bytes of blocks) {
      hash.update(bytes);
      yield { bytes };
    }
  }
  return withChecker(options.checkWorkers ?? availableParallelism(), (checker) =>
    importChecked(checkedBlocks(hashed(), checker), paths, options, { digest: () => hash.digest('hex'), source: 'lines' }),
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
export async function importLines(lines: AsyncIterable<string>, paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  const hash = createHash('sha256');
  async function* hashed() {
    for await (const line of lines) {
      hash.update(line).update('\n');
      yield line;
    }
  }
  return importChecked(checkedLines(hashed(), batchLines(options)), paths, options, { digest: () => hash.digest('hex'), source: 'lines' });
}

/** Imports events given as objects (tests, the demo); the line of event i is i + 1. */
export async function importEvents(events: unknown[], paths: LocalPaths, options: ImportOptions = {}): Promise<ImportReport> {
  const hash = createHash('sha256');
  for (const event of events) hash.update(JSON.stringify(event) ?? 'undefined').update('\n');
  const size = batchLines(options);
  const batches = Array.from({ length: Math.ceil(events.length / size) }, (_, i) => checkEventBatch(events.slice(i * size, (i + 1) * size)));
  return importChecked(batches, paths, options, { digest: hash.digest('hex'), source: 'events' });
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
  paths: LocalPaths,
  options: ImportOptions,
  identity: InputIdentity,
): Promise<ImportReport> {
  if (options.publish && !options.publishDerived) throw new Error('publish needs publishDerived: events and their derived files go together');
  const staging = join(paths.stagingDir, stagingName(`import-${randomBytes(4).toString('hex')}`));
  const eventsStaging = join(staging, 'events');
  const derivedStaging = Object.fromEntries(derivedRelations.map((r) => [r.folder, join(staging, r.folder)])) as Record<DerivedFolder, string>;
  const report: ImportReport = { rowsWritten: 0, rowsAccepted: 0, rejected: [], domains: {}, files: 0, alreadyImported: false };
  await mkdir(staging, { recursive: true });
  // Files published elsewhere go to S3 (ingest/s3-store.ts).
  const store: EventFileStore = options.publish ? 's3' : 'local';
  const writer = await PartitionWriter.open(join(staging, 'partitions'), store, store === 's3' ? S3_CODECS : localCodecs());
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
      for (const [domain, rows] of Object.entries(batch.domains)) report.domains[domain] = (report.domains[domain] ?? 0) + rows;
      report.rowsWritten += batch.accepted;
      report.rowsAccepted += batch.accepted;
      await writer.add(batch);
    }
    const digest = typeof identity.digest === 'string' ? identity.digest : identity.digest();
    const publishedName = `${digest.slice(0, 32)}.parquet`;
    if (options.publish && (await options.publishedImports?.has(digest))) {
      // Recorded, so every file is up; shown again in case the process died between the record and the showing.
      for (const [domain, names] of byDomain(writer.partitionFiles(publishedName))) await options.visibility?.show(domain, names);
      // And its digest dropped from the month's usage item, in case the process died between the record and that.
      for (const domain of Object.keys(report.domains)) await forgetImportCount(domain, digest, new Date());
      return alreadyImportedReport(report.rejected, report.rowsAccepted);
    }
    await stageDone('read and check');
    // A local import keys its buckets and marks its fragments as it writes them, from the store as it is now;
    // files bound for S3 carry neither (Athena counts visitor ids, and only S3's upkeep marks fragments).
    const store = options.publish ? undefined : () => currentSnapshotPaths(paths);
    const files = await writer.writePartitions(eventsStaging, derivedStaging, options.publish ? publishedName : undefined, store);
    await stageDone('write partitions');
    // The days of every file are recorded before any file is published, so all-time reads bounded by them
    // (shared/store/domain-days-repo.ts) always cover what they can see. A domain without a record may have files
    // from before records existed: their days are recorded first.
    for (const [domain, days] of daysOfFiles(files)) {
      if (!(await readDomainDays(domain))) {
        const stored = options.publish ? await options.storedDays?.(domain) : storedDaysOf(paths, domain);
        if (stored) await widenDomainDays(domain, stored.firstDay, stored.lastDay);
      }
      await widenDomainDays(domain, days.firstDay, days.lastDay);
    }
    const record: ImportRecord = { digest, source: identity.source, at: new Date().toISOString(), rows: report.rowsWritten, domains: report.domains };
    if (options.publish) {
      const hidden = byDomain(files);
      for (const [domain, names] of hidden) await options.visibility?.hide(domain, names);
      // Derived files first: an event file readers can see always has its derived files beside it.
      for (const { folder } of derivedRelations) await options.publishDerived![folder](derivedStaging[folder], parquetFilesUnder(derivedStaging[folder]));
      await options.publish(eventsStaging, files);
      report.files = files.length;
      // Counted once per input whatever the retries, then recorded: a record means rows and usage are both in.
      const countedAt = new Date();
      for (const [domain, count] of Object.entries(report.domains)) await recordImportedEventsOnce(domain, count, digest, countedAt);
      await options.publishedImports?.record(record);
      // The record now stops any retry before it counts: the month's item need not keep the digest.
      if (options.publishedImports) for (const domain of Object.keys(report.domains)) await forgetImportCount(domain, digest, countedAt);
      for (const [domain, names] of hidden) await options.visibility?.show(domain, names);
      return report;
    }
    const published = await withStoreTransaction(paths, async (snapshot) => {
      if (hasImportRecord(snapshot, digest)) return { value: false, changed: false };
      // A store written by an older version is brought up to date first, as the backfill would (once: then it
      // finds nothing to do), so no fragment is marked whole without its paths.
      const upgraded = await deriveMissing(snapshot);
      const domains = Object.keys(report.domains);
      // The keys the import gave hold unless another writer changed the domains' keyed files since; else the
      // staged buckets are keyed again from this snapshot before they are moved in.
      const keysHold = writer.keysHold(snapshot);
      if (!keysHold) await keyVisitors(snapshot, { pending: derivedStaging, domains });
      await moveInto(eventsStaging, files, snapshot.eventsDir);
      for (const { folder } of derivedRelations) await moveInto(derivedStaging[folder], parquetFilesUnder(derivedStaging[folder]), snapshot.derivedDirs[folder]);
      // Stored files of older versions without keys are keyed after the import's own, so no key is given twice.
      if (keysHold) await keyVisitors(snapshot, { domains });
      // The import marked its fragments by its own rows; this pass corrects the marks of the sessions it shares
      // with the store (only those gained fragments). Files derived again for an upgrade are written not whole, in
      // any domain: then every domain is marked.
      await markWholeFragments(snapshot, upgraded > 0 ? {} : { domains, sessionsOf: files });
      writeImportRecord(snapshot, record);
      return { value: true, changed: true };
    });
    await recordUsage(paths);
    await stageDone('publish');
    if (!published) return alreadyImportedReport(report.rejected, report.rowsAccepted);
    report.files = files.length;
    return report;
  } finally {
    await writer.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/** The paths of the store's current snapshot as it is now (not its `current` link, which a writer may move), or null before its first. */
function currentSnapshotPaths(paths: LocalPaths): LocalPaths | null {
  const snapshot = currentSnapshot(snapshotLayout(paths.dataDir));
  return snapshot ? pathsOfSnapshot(paths, snapshot) : null;
}

/** Files named `domain=<d>/dt=<day>/<file>` by domain, each as `dt=<day>/<file>`. */
function byDomain(files: string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files) {
    const [domainPart, ...rest] = file.split(/[\\/]/);
    const domain = domainPart!.slice('domain='.length);
    out.set(domain, [...(out.get(domain) ?? []), rest.join('/')]);
  }
  return out;
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
  /** Per domain, the keyed files its keys were given from (store/visitor-keys.ts, keysBeforeLock). */
  private readonly keyFingerprints = new Map<string, string>();

  private constructor(
    private readonly scratch: ScratchDuckDb,
    private readonly stagingDir: string,
    private readonly store: EventFileStore,
    private readonly codecs: StoreCodecs,
  ) {}

  private get connection(): DuckDBConnection {
    return this.scratch.connection;
  }

  /** A writer of files for `store` (the local store, or S3 through a publisher) in `codecs`, staging rows under `stagingDir`. */
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
      if (this.store === 'local') await this.stage(partition.factsFile, batch.facts.subarray(factsFrom, factsEnd), hold);
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
   * all named `domain=<d>/dt=<day>/<import name>.parquet`; returns the event files' relative names. With `store`
   * (a local import: the paths of the store's current snapshot, null when it has none yet) the buckets are keyed
   * from it and the fragments marked by the import's own rows (WriterKnowledge); without, neither.
   */
  async writePartitions(
    eventsDir: string,
    derivedDirs: Record<DerivedFolder, string>,
    fileName = `${stagingNameStamp()}.parquet`,
    store?: () => LocalPaths | null,
  ): Promise<string[]> {
    await this.writeHeld();
    if (this.rowsAdded === 0) return [];
    const known = store ? { visitorKeys: 'part_keys', splitSessions: 'import_split' } : undefined;
    const connection = this.connection;
    // A second connection writes some of each partition's files: the tables below are the database's, not
    // temporary ones, so both connections read them.
    const other = await this.scratch.connect();
    const partitions = [...this.partitions.values()].sort((a, b) => (a.domain + a.dt < b.domain + b.dt ? -1 : 1));
    const files: string[] = [];
    let rowsWritten = 0;
    let knownDomain: string | undefined;
    for (const { domain, dt, rowsFile } of partitions) {
      if (store && domain !== knownDomain) {
        // The visitors to key, and the sessions in two of the import's partitions (their fragments there are not
        // whole; writeDerived finds the sessions with two fragments in one file), from the domain's facts.
        const facts = factsOf(partitions.filter((p) => p.domain === domain).map((p) => p.factsFile));
        await connection.run(`CREATE OR REPLACE TABLE import_visitors AS SELECT DISTINCT v AS visitor_id FROM ${facts} WHERE v IS NOT NULL`);
        await connection.run(`CREATE OR REPLACE TABLE import_split AS SELECT s AS session_id FROM ${facts} WHERE s IS NOT NULL GROUP BY s HAVING count(DISTINCT filename) > 1`);
        // The snapshot current now, read at once: a snapshot another writer retires is removed minutes later.
        this.keyFingerprints.set(domain, (await keysBeforeLock(connection, store(), domain, 'import_visitors', 'import_keys')).fingerprint);
        knownDomain = domain;
      }
      await connection.run(`CREATE OR REPLACE TABLE part AS ${storedRowsOf(rowsFile)} ORDER BY ${eventFileOrder}`);
      rowsWritten += Number((await connection.runAndReadAll('SELECT count(*) FROM part')).getRows()[0]![0]);
      // The keys of this partition's visitors only: each bucket file joins a table of its own size.
      if (store) await connection.run(`CREATE OR REPLACE TABLE part_keys AS SELECT * FROM import_keys WHERE visitor_id IN (SELECT visitor_id FROM part)`);
      const name = join(`domain=${domain}`, `dt=${dt}`, fileName);
      await mkdir(dirname(join(eventsDir, name)), { recursive: true });
      // The event file and the fragments on this connection, the other derived files on a second one at the same
      // time: one statement at a time kept the two cores about 1.7 busy. Both are awaited before anything else
      // runs, even when one fails, so no statement is left running on a connection about to close.
      const written = await Promise.allSettled([
        (async () => {
          await connection.run(`COPY part TO ${pathLiteral(join(eventsDir, name))} ${eventFileCopyOptions(this.codecs.events, this.store)}`);
          await writeDerived(connection, 'part', name, derivedDirs, this.codecs, { known, only: ['sessions'] });
        })(),
        writeDerived(other, 'part', name, derivedDirs, this.codecs, { known, only: ['pageviews', 'pages', 'visitors', 'custom_events'] }),
      ]);
      for (const result of written) if (result.status === 'rejected') throw result.reason;
      files.push(name);
    }
    // Every partition's rows were read from a file named here: a row in no such file would be lost silently.
    if (rowsWritten !== this.rowsAdded) throw new Error(`an import wrote ${rowsWritten} rows of the ${this.rowsAdded} it accepted`);
    return files;
  }

  /** Whether the keys writePartitions gave (from the store it was given) still hold in the snapshot at `paths`. */
  keysHold(paths: LocalPaths): boolean {
    return [...this.keyFingerprints].every(([domain, fingerprint]) => keysStillHold(paths, domain, fingerprint));
  }

  /** The relative names writePartitions gives the event files of this import, without writing them. */
  partitionFiles(fileName: string): string[] {
    return [...this.partitions.values()].map(({ domain, dt }) => join(`domain=${domain}`, `dt=${dt}`, fileName));
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
  const read = `read_json(${pathLiteral(file)}, format = 'newline_delimited', maximum_object_size = ${2 * MAX_STORED_ROW_BYTES}, columns = {${columns.map(([name, type]) => `${name}: '${type}'`).join(', ')}})`;
  const values = eventColumns.map(([name]) => (name === 'ts' ? 'epoch_ms(ts) AS ts' : name));
  return `SELECT ${values.join(', ')} FROM ${read}`;
}

/** A file name no other import's can equal: its time, then random bits. */
function stagingNameStamp(): string {
  return `${new Date().toISOString().replace(/[-:.]/g, '')}-${randomBytes(6).toString('hex')}`;
}

/** Moves every staged file to the same relative place under the events folder (a rename: never half a file). */
async function moveInto(stagingDir: string, files: string[], eventsDir: string): Promise<void> {
  for (const name of files) {
    const target = join(eventsDir, name);
    await mkdir(dirname(target), { recursive: true });
    await rename(join(stagingDir, name), target);
  }
}
