import { logger } from '../shared/log.js';
import { UnwritableRows } from '../writer/derived-writer.js';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { releaseLease, takeLease } from '../shared/store/leases-repo.js';
import {
  forgetSuperseded,
  hideFiles,
  readFileStates,
  recordLayout,
  recordUpgraded,
  showFiles,
  supersede,
  waitToUpload,
} from '../shared/store/file-states-repo.js';
import { STORE_LAYOUT } from '../shared/events/store-layout.js';
import { writeCompacted } from '../writer/compacted-file.js';
import { S3_CODECS } from '../writer/parquet-codec.js';
import { parquetFilesUnder } from '../writer/parquet-files.js';
import { openScratchDuckDb } from '../writer/scratch-duckdb.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import { refreshFragmentIndex, splitSessionsOf } from './fragment-index.js';
import { download, listing } from './s3-objects.js';
import { s3Publisher } from './s3-store.js';

// Scheduled upkeep of the S3 store (docs/STORAGE.md, "Upkeep on S3"). Each ingest adds one file per partition it
// touches, in every relation; many small files cost every query (per-file work, and sessions split into fragments
// to merge). Upkeep rewrites a partition with many files as one event file (writer/event-file-layout.ts) and its
// derived files, and makes the swap invisible to queries through the domain's file states
// (shared/store/file-states-repo.ts):
//   1. the compacted file is hidden, then uploaded in every relation (derived first, then events);
//   2. one write shows it and hides the files it replaces;
//   3. a later run, once the grace period is over (longer than any query runs), deletes the replaced files, then
//      forgets the compaction.
// A run that dies anywhere leaves a state queries read correctly; the next run finishes step 3, and a compacted
// file still hidden after the grace period (a run that died in step 1) is deleted and the partition compacted
// again. Only files of finished imports are compacted (a digest-named file needs its import record), so an import
// retried after a crash never writes again a file upkeep already folded into a compacted one. Runs must not
// overlap: each holds a lease in DynamoDB (shared/store/leases-repo.ts), and a run that finds it held does nothing.
// Domains are taken in turn from where the last run stopped, so a run that cannot reach them all leaves no domain
// waiting for ever.
//
// Whole-fragment marks (docs/STORAGE.md, "Whole marks on S3"): a rewritten partition's fragments are marked whole
// when their session has no fragment in any other file of the domain listed by the run (listed after the event
// files, so every file compacted is among them; a file arriving later is unmarked). Which files hold which sessions
// comes from the domain's fragment index (ingest/fragment-index.ts), so a run reads only the fragment files written
// since the index was saved, and whether an import is finished from its record alone: a run's requests grow with
// the files that arrived and the partitions it rewrites, not with the domain's history. An ingest may later add an
// unmarked fragment to a marked session, never a marked one, so a session has at most one marked fragment and
// Athena's queries merge a marked fragment with its session's unmarked ones (StoreCatalog.wholeMarksExact). A
// partition is rewritten when crowded, and also once its import files have settled, so every partition gets marks.
//
// Upgrade (docs/STORAGE.md, "Upgrading the S3 store"): a domain whose file states record a layout below the current
// one (shared/events/store-layout.ts) may hold derived files without columns added since, and queries read it
// without them. Upkeep rewrites its partitions in order, every one however few its files (a rewrite derives every
// relation again at the current layout), records its progress after each, and records the current layout once the
// last is rewritten: from then on the domain is read with every column. A partition it cannot rewrite yet (a
// compaction still in its grace period, an import in flight, no room for hidden files, the run's budget spent) ends
// the pass for this run; one whose rows cannot be rewritten as one file keeps the domain below the layout (logged).

export interface UpkeepTarget {
  client: S3Client;
  bucket: string;
  /** A folder for downloaded and compacted files (Lambda: under /tmp). */
  workDir: string;
}

export interface UpkeepOptions {
  /** A partition is compacted from this many event files on. */
  minFiles?: number;
  /**
   * A partition holding an import's file is rewritten (and its fragments marked) once its newest event file is this
   * old, however few its files.
   */
  settleMs?: number;
  /** How long replaced files stay readable by queries that started before the swap; and pending ones are left alone. */
  graceMs?: number;
  /**
   * At most this many files of a domain hidden at once: every query of the domain names each hidden file in its
   * text (for each relation it reads), and the domain's state item holds them. A partition with more files than
   * the room left is compacted in part; partitions beyond the budget wait for a later run.
   */
  maxHiddenFiles?: number;
  now?: () => number;
  /** How long a run holds the lease: longer than the function may run. */
  leaseMs?: number;
  /** No domain is started after this long (real time): the function's timeout less the longest domain's work. */
  budgetMs?: number;
}

export interface UpkeepReport {
  /** `<domain>/dt=<day>` of each partition compacted by this run. */
  compacted: string[];
  /** Partitions whose replaced files this run deleted. */
  cleaned: string[];
  /** Partitions whose compacted file was found hidden past the grace period and deleted. */
  abandoned: string[];
  /** Domains this run brought to the current layout (their last partition rewritten). */
  upgraded: string[];
  /** Another run held the lease: this one did nothing. */
  busy?: boolean;
  /** The run stopped at its budget; the next run starts at this domain. */
  next?: string;
}

export const UPKEEP_MIN_FILES = 8;
export const UPKEEP_GRACE_MS = 60 * 60_000;
export const UPKEEP_MAX_HIDDEN_FILES = 200;
export const UPKEEP_SETTLE_MS = 60 * 60_000;
const UPKEEP_LEASE = 'upkeep';
/** The function's timeout is 15 minutes: a lease of 16 outlives any run, and a dead run's lease ends soon after. */
export const UPKEEP_LEASE_MS = 16 * 60_000;
/** 10 minutes of 15: the last domain started has 5 to finish. */
export const UPKEEP_BUDGET_MS = 10 * 60_000;

const EVENTS_FOLDER = 'events';
const folders = [EVENTS_FOLDER, ...derivedRelations.map((r) => r.folder)];

export async function upkeepStore(target: UpkeepTarget, options: UpkeepOptions = {}): Promise<UpkeepReport> {
  const minFiles = options.minFiles ?? UPKEEP_MIN_FILES;
  const settleMs = options.settleMs ?? UPKEEP_SETTLE_MS;
  const graceMs = options.graceMs ?? UPKEEP_GRACE_MS;
  const now = options.now ?? Date.now;
  const report: UpkeepReport = { compacted: [], cleaned: [], abandoned: [], upgraded: [] };
  // Runs never overlap (two would compact the same partition): a lease in DynamoDB, on real time, not `now`.
  const owner = randomUUID();
  const lease = await takeLease(UPKEEP_LEASE, owner, options.leaseMs ?? UPKEEP_LEASE_MS);
  if (!lease) return { ...report, busy: true };
  const stopStartingAt = Date.now() + (options.budgetMs ?? UPKEEP_BUDGET_MS);
  let cursor: string | undefined;
  try {
    const recorded = importRecords(target);
    // From the domain after the one the last run stopped at, round the sorted list: a run that cannot reach every
    // domain leaves the rest to the next, and every domain's turn comes.
    const domains = (await domainsOf(target)).sort();
    const from =
      lease.cursor === undefined
        ? 0
        : Math.max(
            0,
            domains.findIndex((d) => d > lease.cursor!),
          );
    let last: string | undefined;
    for (const domain of [...domains.slice(from), ...domains.slice(0, from)]) {
      if (last !== undefined && Date.now() >= stopStartingAt) {
        cursor = last;
        report.next = domain;
        break;
      }
      try {
        await upkeepDomain(
          target,
          domain,
          recorded,
          {
            minFiles,
            settleMs,
            graceMs,
            now,
            maxHiddenFiles: options.maxHiddenFiles ?? UPKEEP_MAX_HIDDEN_FILES,
            stopStartingAt,
          },
          report,
        );
      } catch (error) {
        // The next run starts after this domain: one that fails every time keeps none of the others waiting.
        cursor = domain;
        throw error;
      }
      last = domain;
    }
  } finally {
    await releaseLease(UPKEEP_LEASE, owner, cursor);
  }
  return report;
}

/** One domain's upkeep: clean-up past the grace period, then compaction of its crowded partitions, within the budget. */
async function upkeepDomain(
  target: UpkeepTarget,
  domain: string,
  recorded: (digest: string) => Promise<boolean>,
  options: {
    minFiles: number;
    settleMs: number;
    graceMs: number;
    now: () => number;
    maxHiddenFiles: number;
    /** Real time after which the upgrade starts no partition. */
    stopStartingAt: number;
  },
  report: UpkeepReport,
): Promise<void> {
  const { minFiles, settleMs, graceMs, now } = options;
  const states = await readFileStates(domain);
  // The domain's files still hidden once this run's clean-up is done; compactions add to it, within the budget.
  let hidden = 0;
  for (const [partition, compaction] of Object.entries(states.superseded)) {
    if (now() - compaction.since < graceMs) {
      hidden += compaction.replaces.length;
      continue;
    }
    await deleteEverywhere(target, domain, partition, compaction.replaces);
    await forgetSuperseded(domain, partition, compaction.file);
    report.cleaned.push(`${domain}/${partition}`);
  }
  for (const [file, since] of Object.entries(states.pending)) {
    const [partition, name] = file.split('/') as [string, string];
    if (!name.startsWith('compacted-') || now() - since < graceMs) {
      hidden += 1;
      continue;
    }
    await deleteEverywhere(target, domain, partition, [name]);
    // Its entry goes once the file is gone: there is nothing left to show.
    await showFiles(domain, [file]);
    report.abandoned.push(`${domain}/${partition}`);
  }
  // A partition whose compaction this run finished (its replaced files deleted) may be compacted again at once.
  const cleaned = new Set(
    report.cleaned.filter((p) => p.startsWith(`${domain}/`)).map((p) => p.slice(domain.length + 1)),
  );
  const busy = new Set([
    ...Object.keys(states.superseded).filter((p) => !cleaned.has(p)),
    ...Object.keys(states.pending).map((f) => f.split('/')[0]!),
  ]);
  const due: { partition: string; files: { name: string; modified: number }[]; compactable: string[] }[] = [];
  const partitions = await eventFilesOf(target, domain);
  for (const [partition, files] of partitions) {
    if (busy.has(partition)) continue;
    // Nothing to do unless crowded or settled (counting every file: unfinished imports' are left out below).
    const settledAt = now() - Math.max(...files.map((f) => f.modified)) >= settleMs;
    if (files.length < minFiles && !(settledAt && files.some((f) => !f.name.startsWith('compacted-')))) continue;
    // Files of imports not finished yet stay as they are (see above).
    const compactable: string[] = [];
    for (const { name } of files)
      if (!/^[0-9a-f]{32}\.parquet$/.test(name) || (await recorded(name.slice(0, 32)))) compactable.push(name);
    const settled = settledAt && compactable.some((n) => !n.startsWith('compacted-'));
    if (compactable.length < minFiles && !settled) continue;
    due.push({ partition, files, compactable });
  }
  // Below the current layout: the partitions after the last one the upgrade rewrote, in order.
  const upgrading = states.layout < STORE_LAYOUT;
  const toUpgrade = upgrading
    ? [...partitions.keys()].filter((p) => states.upgraded === undefined || p > states.upgraded).sort()
    : [];
  if (upgrading && toUpgrade.length === 0) {
    await recordLayout(domain, STORE_LAYOUT);
    report.upgraded.push(domain);
    return;
  }
  // No room for even one partition: nothing to open DuckDB or read the index for.
  if ((due.length === 0 && toUpgrade.length === 0) || options.maxHiddenFiles - hidden - 1 < 2) return;
  const scratch = await openScratchDuckDb();
  try {
    await refreshFragmentIndex(target, domain, scratch.connection);
    // Partitions this run compacted: true when every file of the partition was rewritten.
    const compactedNow = new Map<string, boolean>();
    for (const { partition, files, compactable } of due) {
      // Within the domain's budget of hidden files: a partition with more files than the room left is compacted
      // in part (its oldest files; the rest, with the compacted file, at a later run), so no partition, however
      // crowded, keeps the others from being compacted. One that cannot be rewritten hides nothing and takes no room.
      const room = options.maxHiddenFiles - hidden - 1;
      if (room < 2) break;
      const chunk = compactable.length <= room ? compactable : oldestFirst(files, compactable).slice(0, room);
      const outcome = await compact(target, scratch.connection, domain, partition, chunk, now());
      if (outcome === 'unwritable') continue;
      hidden += chunk.length;
      if (outcome) report.compacted.push(`${domain}/${partition}`);
      if (outcome) compactedNow.set(partition, chunk.length === files.length);
    }
    for (const partition of toUpgrade) {
      // Rewritten whole by this run's compaction above: at the current layout already; in part: wait for its grace.
      if (compactedNow.get(partition) !== true) {
        if (busy.has(partition) || compactedNow.has(partition) || Date.now() >= options.stopStartingAt) return;
        const files = partitions.get(partition)!.map((f) => f.name);
        const room = options.maxHiddenFiles - hidden - 1;
        // Rewritten whole or not at all: a file left beside the compacted one may lack the layout's columns.
        if (files.length > room) return;
        for (const name of files)
          if (/^[0-9a-f]{32}\.parquet$/.test(name) && !(await recorded(name.slice(0, 32)))) return;
        const outcome = await compact(target, scratch.connection, domain, partition, files, now());
        if (outcome === 'unwritable') {
          logger.warn('domain left below the current layout', { domain, partition });
          return;
        }
        if (!outcome) return;
        hidden += files.length;
        report.compacted.push(`${domain}/${partition}`);
      }
      await recordUpgraded(domain, partition);
    }
    await recordLayout(domain, STORE_LAYOUT);
    report.upgraded.push(domain);
  } finally {
    scratch.close();
  }
}

/**
 * Rewrites one partition from its event files `names` and shows the result in place of them (true when this run's
 * file replaced them). A fragment of the result is marked whole when its session is in no other fragment file of the
 * domain's index (refreshFragmentIndex). `unwritable`: the rows cannot be rewritten as one file (UnwritableRows);
 * nothing was written, and nothing stays hidden.
 */
async function compact(
  target: UpkeepTarget,
  connection: DuckDBConnection,
  domain: string,
  partition: string,
  names: string[],
  now: number,
): Promise<boolean | 'unwritable'> {
  // Named after its partition and the names it replaces: no other partition's compacted file has its name, so
  // readers may hide it by name alone while it is pending (shared/store/file-states-repo.ts, hiddenFiles).
  const file = `compacted-${createHash('sha256')
    .update([partition, ...names.sort()].join('\n'))
    .digest('hex')
    .slice(0, 32)}.parquet`;
  const dir = join(target.workDir, `upkeep-${randomBytes(6).toString('hex')}`);
  // Hidden before it is written, so that the wait before its upload passes while it is.
  const pending = `${partition}/${file}`;
  const hiddenAt = await hideFiles(domain, [pending], now);
  try {
    const sources: string[] = [];
    for (const [i, name] of names.entries()) {
      const local = join(dir, 'sources', `${i}.parquet`);
      await download(target, keyOf(EVENTS_FOLDER, domain, partition, name), local);
      sources.push(local);
    }
    const dirs = Object.fromEntries(folders.map((f) => [f, join(dir, f)])) as Record<'events' | DerivedFolder, string>;
    const name = join(`domain=${domain}`, partition, file);
    // Not whole: a session with a fragment in another file of the domain.
    await splitSessionsOf(
      connection,
      'upkeep_split',
      sources,
      names.map((n) => `${partition}/${n}`),
    );
    try {
      await writeCompacted(connection, sources, name, dirs, 's3', S3_CODECS, { splitSessions: 'upkeep_split' });
    } catch (error) {
      // Its files stay as they are and answer as before; the domain's other partitions are compacted.
      if (!(error instanceof UnwritableRows)) throw error;
      logger.warn('partition left uncompacted', { domain, partition, reason: error.message });
      // Nothing of it was uploaded: its entry goes.
      await showFiles(domain, [pending]);
      return 'unwritable';
    }
    await waitToUpload(hiddenAt);
    for (const folder of [...derivedRelations.map((r) => r.folder), EVENTS_FOLDER]) {
      await s3Publisher(`s3://${target.bucket}/${folder}`, target.client)(
        dirs[folder as 'events' | DerivedFolder],
        parquetFilesUnder(dirs[folder as 'events' | DerivedFolder]),
      );
    }
    return await supersede(domain, partition, { file, replaces: names, since: now });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `names` ordered by when their files were written, oldest first (then by name). */
function oldestFirst(files: { name: string; modified: number }[], names: string[]): string[] {
  const modified = new Map(files.map((f) => [f.name, f.modified]));
  return [...names].sort((a, b) => modified.get(a)! - modified.get(b)! || a.localeCompare(b));
}

function keyOf(folder: string, domain: string, partition: string, name: string): string {
  return `${folder}/domain=${domain}/${partition}/${name}`;
}

async function deleteEverywhere(
  target: UpkeepTarget,
  domain: string,
  partition: string,
  names: string[],
): Promise<void> {
  for (const folder of folders) {
    for (const name of names)
      await target.client.send(
        new DeleteObjectCommand({ Bucket: target.bucket, Key: keyOf(folder, domain, partition, name) }),
      );
  }
}

async function domainsOf(target: UpkeepTarget): Promise<string[]> {
  const domains: string[] = [];
  for await (const page of listing(target, `${EVENTS_FOLDER}/`, '/')) {
    for (const p of page.CommonPrefixes ?? []) {
      const domain = /^events\/domain=([^/]+)\/$/.exec(p.Prefix ?? '')?.[1];
      if (domain) domains.push(domain);
    }
  }
  return domains;
}

/** The event files of each of the domain's partitions (`dt=<day>` → names, with their time of writing). */
async function eventFilesOf(
  target: UpkeepTarget,
  domain: string,
): Promise<Map<string, { name: string; modified: number }[]>> {
  const byPartition = new Map<string, { name: string; modified: number }[]>();
  for await (const page of listing(target, `${EVENTS_FOLDER}/domain=${domain}/`)) {
    for (const object of page.Contents ?? []) {
      const match = /\/(dt=\d{4}-\d{2}-\d{2})\/([^/]+\.parquet)$/.exec(object.Key ?? '');
      if (match)
        byPartition.set(match[1]!, [
          ...(byPartition.get(match[1]!) ?? []),
          { name: match[2]!, modified: object.LastModified?.getTime() ?? 0 },
        ]);
    }
  }
  return byPartition;
}

/**
 * Whether the import whose digest begins with `digest` (32 hex digits, its files' name) is recorded: one listing of
 * its record's key prefix, asked once per run.
 */
function importRecords(target: UpkeepTarget): (digest: string) => Promise<boolean> {
  const known = new Map<string, Promise<boolean>>();
  return (digest) => {
    let found = known.get(digest);
    if (!found) {
      found = target.client
        .send(new ListObjectsV2Command({ Bucket: target.bucket, Prefix: `imports/${digest}`, MaxKeys: 1 }))
        .then((page) => (page.Contents ?? []).some((o) => /^imports\/[0-9a-f]{64}\.json$/.test(o.Key ?? '')));
      known.set(digest, found);
    }
    return found;
  };
}
