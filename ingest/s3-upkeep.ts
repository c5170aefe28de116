import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { forgetSuperseded, hideFiles, readFileStates, showFiles, supersede } from '../shared/store/file-states-repo.js';
import { writeCompacted } from '../local/store/compaction.js';
import { S3_CODECS } from '../local/store/parquet-codec.js';
import { parquetFilesUnder } from '../local/store/paths.js';
import { openScratchDuckDb } from '../local/store/scratch-duckdb.js';
import { s3Publisher } from './s3-store.js';

// Scheduled upkeep of the S3 store (docs/STORAGE.md, "Upkeep on S3"). Each ingest adds one file per partition it
// touches, in every relation; many small files cost every query (per-file work, and sessions split into fragments
// to merge). Upkeep rewrites a partition with many files as one ts-ordered event file and its derived files, and
// makes the swap invisible to queries through the domain's file states (shared/store/file-states-repo.ts):
//   1. the compacted file is hidden, then uploaded in every relation (derived first, then events);
//   2. one write shows it and hides the files it replaces;
//   3. a later run, once the grace period is over (longer than any query runs), deletes the replaced files, then
//      forgets the compaction.
// A run that dies anywhere leaves a state queries read correctly; the next run finishes step 3, and a compacted
// file still hidden after the grace period (a run that died in step 1) is deleted and the partition compacted
// again. Only files of finished imports are compacted (a digest-named file needs its import record), so an import
// retried after a crash never writes again a file upkeep already folded into a compacted one. Runs must not
// overlap: the stack gives the function a reserved concurrency of one.
//
// Whole-fragment marks stay a local-store optimisation: an ingest can add a fragment to any session at any time,
// and cannot unmark the session's other fragments in the same step, so on S3 every fragment is merged.

export interface UpkeepTarget {
  client: S3Client;
  bucket: string;
  /** A folder for downloaded and compacted files (Lambda: under /tmp). */
  workDir: string;
}

export interface UpkeepOptions {
  /** A partition is compacted from this many event files on. */
  minFiles?: number;
  /** How long replaced files stay readable by queries that started before the swap; and pending ones are left alone. */
  graceMs?: number;
  /**
   * At most this many files of a domain hidden at once: every query of the domain names each hidden file in its
   * text (for each relation it reads), and the domain's state item holds them. Crowded partitions beyond it wait
   * for a later run.
   */
  maxHiddenFiles?: number;
  now?: () => number;
}

export interface UpkeepReport {
  /** `<domain>/dt=<day>` of each partition compacted by this run. */
  compacted: string[];
  /** Partitions whose replaced files this run deleted. */
  cleaned: string[];
  /** Partitions whose compacted file was found hidden past the grace period and deleted. */
  abandoned: string[];
}

export const UPKEEP_MIN_FILES = 8;
export const UPKEEP_GRACE_MS = 60 * 60_000;
export const UPKEEP_MAX_HIDDEN_FILES = 200;

const EVENTS_FOLDER = 'events';
const folders = [EVENTS_FOLDER, ...derivedRelations.map((r) => r.folder)];

export async function upkeepStore(target: UpkeepTarget, options: UpkeepOptions = {}): Promise<UpkeepReport> {
  const minFiles = options.minFiles ?? UPKEEP_MIN_FILES;
  const graceMs = options.graceMs ?? UPKEEP_GRACE_MS;
  const now = options.now ?? Date.now;
  const report: UpkeepReport = { compacted: [], cleaned: [], abandoned: [] };
  const recorded = await importDigests(target);
  for (const domain of await domainsOf(target)) {
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
    const busy = new Set([...Object.keys(states.superseded), ...Object.keys(states.pending).map((f) => f.split('/')[0]!)]);
    for (const [partition, names] of await eventFilesOf(target, domain)) {
      if (busy.has(partition)) continue;
      // Files of imports not finished yet stay as they are (see above).
      const compactable = names.filter((n) => !/^[0-9a-f]{32}\.parquet$/.test(n) || recorded.has(n.slice(0, 32)));
      if (compactable.length < minFiles) continue;
      if (hidden + compactable.length + 1 > (options.maxHiddenFiles ?? UPKEEP_MAX_HIDDEN_FILES)) break;
      if (await compact(target, domain, partition, compactable, now())) {
        report.compacted.push(`${domain}/${partition}`);
        hidden += compactable.length;
      }
    }
  }
  return report;
}

async function compact(target: UpkeepTarget, domain: string, partition: string, names: string[], now: number): Promise<boolean> {
  // Named after its partition and the names it replaces: no other partition's compacted file has its name, so
  // readers may hide it by name alone while it is pending (shared/store/file-states-repo.ts, hiddenFiles).
  const file = `compacted-${createHash('sha256').update([partition, ...names.sort()].join('\n')).digest('hex').slice(0, 32)}.parquet`;
  const dir = join(target.workDir, `upkeep-${randomBytes(6).toString('hex')}`);
  const scratch = await openScratchDuckDb();
  try {
    const sources: string[] = [];
    for (const [i, name] of names.entries()) {
      const object = await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key: keyOf(EVENTS_FOLDER, domain, partition, name) }));
      const local = join(dir, 'sources', `${i}.parquet`);
      await mkdir(join(dir, 'sources'), { recursive: true });
      // Streamed to /tmp: a partition's files need not fit in memory.
      await pipeline(object.Body as NodeJS.ReadableStream, createWriteStream(local));
      sources.push(local);
    }
    const dirs = Object.fromEntries(folders.map((f) => [f, join(dir, f)])) as Record<'events' | DerivedFolder, string>;
    await writeCompacted(scratch.connection, sources, join(`domain=${domain}`, partition, file), dirs, S3_CODECS);
    await hideFiles(domain, [`${partition}/${file}`], now);
    for (const folder of [...derivedRelations.map((r) => r.folder), EVENTS_FOLDER]) {
      await s3Publisher(`s3://${target.bucket}/${folder}`, target.client)(dirs[folder as 'events' | DerivedFolder], parquetFilesUnder(dirs[folder as 'events' | DerivedFolder]));
    }
    return await supersede(domain, partition, { file, replaces: names, since: now });
  } finally {
    scratch.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function keyOf(folder: string, domain: string, partition: string, name: string): string {
  return `${folder}/domain=${domain}/${partition}/${name}`;
}

async function deleteEverywhere(target: UpkeepTarget, domain: string, partition: string, names: string[]): Promise<void> {
  for (const folder of folders) {
    for (const name of names) await target.client.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: keyOf(folder, domain, partition, name) }));
  }
}

async function* listing(target: UpkeepTarget, prefix: string, delimiter?: string) {
  let token: string | undefined;
  do {
    const page = await target.client.send(new ListObjectsV2Command({ Bucket: target.bucket, Prefix: prefix, Delimiter: delimiter, ContinuationToken: token }));
    yield page;
    token = page.NextContinuationToken;
  } while (token);
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

/** The event files of each of the domain's partitions (`dt=<day>` → names). */
async function eventFilesOf(target: UpkeepTarget, domain: string): Promise<Map<string, string[]>> {
  const byPartition = new Map<string, string[]>();
  for await (const page of listing(target, `${EVENTS_FOLDER}/domain=${domain}/`)) {
    for (const object of page.Contents ?? []) {
      const match = /\/(dt=\d{4}-\d{2}-\d{2})\/([^/]+\.parquet)$/.exec(object.Key ?? '');
      if (match) byPartition.set(match[1]!, [...(byPartition.get(match[1]!) ?? []), match[2]!]);
    }
  }
  return byPartition;
}

/** The first 32 hex digits of every recorded import's digest (the names of its files). */
async function importDigests(target: UpkeepTarget): Promise<Set<string>> {
  const digests = new Set<string>();
  for await (const page of listing(target, 'imports/')) {
    for (const object of page.Contents ?? []) {
      const digest = /^imports\/([0-9a-f]{64})\.json$/.exec(object.Key ?? '')?.[1];
      if (digest) digests.add(digest.slice(0, 32));
    }
  }
  return digests;
}
