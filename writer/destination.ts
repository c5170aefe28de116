import type { DuckDBConnection } from '@duckdb/node-api';
import type { DerivedFolder } from '../shared/events/derived-relations.js';
import type { DomainDays } from '../shared/store/domain-days-repo.js';
import type { EventFileStore } from './event-file-layout.js';
import type { StoreCodecs } from './parquet-codec.js';

// The seam between the importer and where its files go (docs/STORAGE.md). The importer reads and checks lines,
// writes each partition's event file and derived files to a staging folder, and hands them over; a destination knows
// what it has imported, which days a domain has, its visitors' keys if it keeps any, and how to publish what was
// staged. Two implement it: the local snapshot store (local/store/local-destination.ts) and an events bucket on S3
// (ingest/s3-store.ts).

/** What the store keeps of an import: identified by the SHA-256 of its input, so the same input adds nothing twice. */
export interface ImportRecord {
  digest: string;
  /** The file name, or how the rows came (`lines`, `events`). */
  source: string;
  at: string;
  rows: number;
  domains: Record<string, number>;
}

/** The files an import staged, ready to publish. Relative names are `domain=<d>/dt=<day>/<file>`. */
export interface StagedImport {
  eventsDir: string;
  derivedDirs: Record<DerivedFolder, string>;
  /** The event files' relative names (each relation's file has the same name under its folder). */
  files: string[];
  /** Written by publish once the files are in and usage is counted. */
  record: ImportRecord;
}

/**
 * The visitor keys of a destination that keys its visitors as files are written (the local store; Athena counts
 * visitor ids instead). `before` writes into `table` the keys of the visitors in `needed` for `domain`, new ones
 * numbered after the stored ones, from the store as it is now, and returns a fingerprint of the files it read.
 */
export interface VisitorKeySource {
  before(connection: DuckDBConnection, domain: string, needed: string, table: string): Promise<string>;
}

export interface ImportDestination {
  /** How event files are laid out for this store's readers (row groups), and the codec of each relation. */
  readonly store: EventFileStore;
  readonly codecs: StoreCodecs;
  /** A folder for the import's staging files, on the same file system as the store where it moves them by rename. */
  readonly stagingDir: string;
  /**
   * The name of the import's files, from its digest: a destination without transactions names them so that a retry
   * after a crash midway finds what it had written (on S3, kept as it is). Undefined: a fresh name.
   */
  fileName(digest: string): string | undefined;
  /** Whether the input of `digest` was imported before (before reading it: only a destination that can tell). */
  importedBefore(digest: string): Promise<boolean>;
  /**
   * After reading: whether the input was imported before; then the destination completes what a crash after its
   * record may have left undone (`files`: the import's event files, `domains`: its rows per domain).
   */
  settleImported(digest: string, files: string[], domains: string[]): Promise<boolean>;
  /** The days a domain already has files in (written before days were recorded in DynamoDB). */
  storedDays(domain: string): Promise<DomainDays | undefined>;
  /** Present when the destination keys visitors and marks fragments as files are written. */
  readonly visitorKeys?: VisitorKeySource;
  /**
   * Makes the staged files visible to queries, whole, with usage counted once and the record written. False when
   * another writer imported the same input meanwhile (nothing was added).
   */
  publish(staged: StagedImport, keyFingerprints: ReadonlyMap<string, string>): Promise<boolean>;
}
