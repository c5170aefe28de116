import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { packExpressionClauses } from '../aws/service-limits.js';
import { tableNames } from '../config.js';
import { documentClient, updateIf } from './dynamo-client.js';

// Which files of a domain's S3 partitions queries must not read yet, or not any more (docs/STORAGE.md, "Writing to
// S3"). S3 makes one object visible at a time; this item (one per domain, `files#<domain>` in the counters table,
// never expiring) makes many appear or disappear at once for readers, who read it before every query:
//   - pending: files being uploaded (an import's files in every relation and partition, or a compacted file); left
//     out until the writer shows them all in one write;
//   - superseded: per partition, the files a compacted file replaced; left out from the write that makes the
//     compacted file visible until upkeep deletes them, after a grace period longer than any query runs.
// A file is named `dt=<day>/<file>.parquet`: every relation's files of one partition and one writer share a name.
// Every write that changes what queries read also adds 1 to the item's `version`, in the same UpdateItem: the
// domain's data version, which keys its cached answers (shared/store/answer-cache-repo.ts). The item's `layout` is
// the layout (shared/events/store-layout.ts) every file of the domain is at: set by the first import of a domain
// with no files, and by upkeep once it has rewritten every partition of a domain written before (its progress in
// `upgraded`, the last partition rewritten); readers plan a domain below the current layout without the columns
// added since (StoreCatalog, withStoreLayout).

export interface Compaction {
  /** The compacted file, `<name>.parquet`. */
  file: string;
  /** The files it replaces, `<name>.parquet`. */
  replaces: string[];
  /** Epoch ms when it replaced them. */
  since: number;
}

export interface FileStates {
  /** Changed by every write of this item: what queries read of the domain is the same while it is. */
  version: number;
  /** `dt=<day>/<file>` → epoch ms when hidden. */
  pending: Record<string, number>;
  /** By partition, `dt=<day>`. */
  superseded: Record<string, Compaction>;
  /** The layout every file of the domain is at; 0 when unknown (files written before layouts were recorded). */
  layout: number;
  /** While upkeep brings the domain to the current layout: the last partition it rewrote, `dt=<day>`. */
  upgraded?: string;
}

const key = (domain: string) => ({ pk: `files#${domain}` });

// Hiding files takes effect for readers that read this item after the hide write. A reader that read it just before
// does not name the new files, and its statement may list a partition while they are being uploaded: it would read
// part of an import, or a compacted file beside the files it replaces. So every reader also leaves out each file S3
// dated at or after its read (`"$file_modified_time"`, StoreCatalog), and every writer waits uploadDelayMs() after its
// hide write before its first upload. With c the most the reader's clock and S3's are each off from true time (the
// writer's only measures its wait), S3's dates cut down to the whole second, and a read's round trip at most
// READ_MAX_MS (read again when longer), in the reader's clock, readAt being when its read returned:
//   - a file shown before a read was uploaded before the read returned: S3 dated it before readAt + 2c, which is
//     visibleBefore;
//   - a file hidden after a read is uploaded at least uploadDelayMs() after the read was sent: S3 dated it after
//     readAt - READ_MAX_MS + uploadDelayMs() - 2c - 1 s, which is visibleBefore again.
// A statement then reads exactly the files its read shows, however long it waits for a slot or runs. A file must
// not be written again once shown (its new date would leave it out): uploads never replace a file (s3Publisher).

/**
 * The most any clock involved is off from true time, in ms: AWS keeps Lambda's and S3's clocks far closer than this
 * (Amazon Time Sync); STORE_CLOCK_SKEW_MS sets it (the tests run every process on one clock: 0).
 */
export function clockSkewMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.STORE_CLOCK_SKEW_MS;
  if (text === undefined || text === '') return 500;
  const ms = Number(text);
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > 10_000)
    throw new Error(`STORE_CLOCK_SKEW_MS must be a whole number of ms from 0 to 10000, not "${text}"`);
  return ms;
}
/** A read of the item that took longer is read again: the later a read ends, the later its files' cut-off. */
export const READ_MAX_MS = 500;
/** How finely S3 dates an object (Last-Modified is a whole second, cut down). */
const S3_DATE_STEP_MS = 1000;

/**
 * How long a writer waits after hiding files before it uploads the first of them (3.5 s in AWS). STORE_UPLOAD_DELAY_MS
 * overrides it for tests that never read while a writer writes (a thousand ingests in one test would wait for
 * minutes); set below this value where reads and writes overlap, a read may see part of an import.
 */
export function uploadDelayMs(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.STORE_UPLOAD_DELAY_MS;
  if (text !== undefined && text !== '') {
    const ms = Number(text);
    if (!Number.isSafeInteger(ms) || ms < 0)
      throw new Error(`STORE_UPLOAD_DELAY_MS must be a whole number of ms, not "${text}"`);
    return ms;
  }
  return READ_MAX_MS + S3_DATE_STEP_MS + 4 * clockSkewMs(env);
}

/** Waits out uploadDelayMs() from `hiddenAt` (epoch ms, this process's clock). */
export async function waitToUpload(hiddenAt: number): Promise<void> {
  const until = hiddenAt + uploadDelayMs();
  // A timer may fire a little early by Date.now(): wait again until it has passed.
  for (let left = until - Date.now(); left > 0; left = until - Date.now())
    await new Promise((resolve) => setTimeout(resolve, left));
}

/** The clause every write of the item ends with: its data version moves on. */
const BUMP = ' ADD #version :one';
const bumpNames = { '#version': 'version' };
const bumpValues = { ':one': 1 };

export async function readFileStates(domain: string): Promise<FileStates> {
  const { Item } = await documentClient().send(
    new GetCommand({ TableName: tableNames().counters, Key: key(domain), ConsistentRead: true }),
  );
  return {
    version: Number(Item?.version ?? 0),
    pending: (Item?.pending as FileStates['pending'] | undefined) ?? {},
    superseded: (Item?.superseded as FileStates['superseded'] | undefined) ?? {},
    layout: Number(Item?.layout ?? 0),
    ...(typeof Item?.upgraded === 'string' ? { upgraded: Item.upgraded } : {}),
  };
}

/** The files queries of `domain` leave out, as `dt=<day>/<file>`; none on a store no writer is changing. */
export async function excludedFiles(domain: string): Promise<string[]> {
  const { pending, superseded } = await readFileStates(domain);
  return [
    ...Object.keys(pending),
    ...Object.entries(superseded).flatMap(([partition, c]) => c.replaces.map((name) => `${partition}/${name}`)),
  ].sort();
}

/**
 * What queries of `domain` leave out, in the fewest names: pending import files by file name alone (an import's
 * file name is its own in every partition, so an import of a thousand days is one name), and replaced files and
 * pending compacted ones as `dt=<day>/<file>` (a replaced import file may still be visible in other partitions).
 */
export async function hiddenFiles(domain: string): Promise<HiddenFiles> {
  const sent = performance.now();
  const { version, pending, superseded, layout } = await readFileStates(domain);
  const readMs = performance.now() - sent;
  const readAt = Date.now();
  // A pending compacted file is one partition's, and upkeep deletes it if its run died: named by partition, so that
  // readers that know the whole path never open it (StoreCatalog.locations).
  const compacted = Object.keys(pending).filter((f) => f.includes('/compacted-'));
  return {
    names: [
      ...new Set(
        Object.keys(pending)
          .filter((f) => !f.includes('/compacted-'))
          .map((f) => f.slice(f.indexOf('/') + 1)),
      ),
    ].sort(),
    files: [
      ...compacted,
      ...Object.entries(superseded).flatMap(([partition, c]) => c.replaces.map((name) => `${partition}/${name}`)),
    ].sort(),
    visibleBefore: new Date(readAt + 2 * clockSkewMs()),
    readMs,
    version,
    layout,
  };
}

export interface HiddenFiles {
  /** Import file names left out in every partition. */
  names: string[];
  /** `dt=<day>/<file>` left out in that partition. */
  files: string[];
  /** Files S3 dated at or after this were uploaded after the read (or are being): left out too. */
  visibleBefore: Date;
  /** How long the read took; over READ_MAX_MS, visibleBefore is not sound: read again. */
  readMs: number;
  version: number;
  layout: number;
}

/**
 * Hides files from queries before they are uploaded (idempotent). Returns when the hide took effect, by this process's
 * clock: the writer uploads none of them before waitToUpload() of it has passed.
 */
export async function hideFiles(domain: string, files: readonly string[], now = Date.now()): Promise<number> {
  if (files.length === 0) return Date.now();
  await ensureItem(domain);
  // As many names per write as DynamoDB's 4 KB expression limit takes (an import of many days hides many).
  for (const { from, to, expression } of packExpressionClauses(
    files.length,
    'SET ',
    (_, j) => `pending.#f${j} = if_not_exists(pending.#f${j}, :now)`,
    2,
    BUMP,
    1,
  )) {
    const part = files.slice(from, to);
    await documentClient().send(
      new UpdateCommand({
        TableName: tableNames().counters,
        Key: key(domain),
        UpdateExpression: expression,
        ExpressionAttributeNames: { ...Object.fromEntries(part.map((f, j) => [`#f${j}`, f])), ...bumpNames },
        ExpressionAttributeValues: { ':now': now, ...bumpValues },
      }),
    );
  }
  return Date.now();
}

/**
 * Shows hidden files to queries once all are uploaded (idempotent), as many per write as the expression limit takes.
 * Readers hide pending files by name alone (hiddenFiles), and one writer's files share their name, so they appear
 * with the last write.
 */
export async function showFiles(domain: string, files: readonly string[]): Promise<void> {
  for (const { from, to, expression } of packExpressionClauses(
    files.length,
    'REMOVE ',
    (_, j) => `pending.#f${j}`,
    1,
    BUMP,
    1,
  )) {
    const part = files.slice(from, to);
    await documentClient()
      .send(
        new UpdateCommand({
          TableName: tableNames().counters,
          Key: key(domain),
          UpdateExpression: expression,
          ConditionExpression: 'attribute_exists(pending)',
          ExpressionAttributeNames: { ...Object.fromEntries(part.map((f, j) => [`#f${j}`, f])), ...bumpNames },
          ExpressionAttributeValues: bumpValues,
        }),
      )
      .catch((error: unknown) => {
        // No item, or no pending map: nothing was hidden.
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
  }
}

/**
 * In one write: shows the partition's compacted file (hidden while it was uploaded) and hides the files it
 * replaces. False when the partition already has a compaction waiting for its deletions.
 */
export async function supersede(domain: string, partition: string, compaction: Compaction): Promise<boolean> {
  return updateIf(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(domain),
      UpdateExpression: `REMOVE pending.#c SET superseded.#p = :c${BUMP}`,
      ConditionExpression: 'attribute_not_exists(superseded.#p)',
      ExpressionAttributeNames: { '#p': partition, '#c': `${partition}/${compaction.file}`, ...bumpNames },
      ExpressionAttributeValues: { ':c': compaction, ...bumpValues },
    }),
  );
}

/** Forgets a partition's compaction once the files it replaced are deleted. */
export async function forgetSuperseded(domain: string, partition: string, file: string): Promise<void> {
  await updateIf(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(domain),
      UpdateExpression: `REMOVE superseded.#p${BUMP}`,
      ConditionExpression: 'superseded.#p.#file = :file',
      ExpressionAttributeNames: { '#p': partition, '#file': 'file', ...bumpNames },
      ExpressionAttributeValues: { ':file': file, ...bumpValues },
    }),
  );
}

/**
 * Records that every file of `domain` is at `layout` (never lowering it): a new version of the plans reads the
 * domain with the columns of that layout. The data version moves on, since the answers' statements change.
 */
export async function recordLayout(domain: string, layout: number): Promise<void> {
  await updateIf(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(domain),
      UpdateExpression: `SET #layout = :layout REMOVE #upgraded${BUMP}`,
      ConditionExpression: 'attribute_not_exists(#layout) OR #layout < :layout',
      ExpressionAttributeNames: { '#layout': 'layout', '#upgraded': 'upgraded', ...bumpNames },
      ExpressionAttributeValues: { ':layout': layout, ...bumpValues },
    }),
  );
}

/** Records upkeep's progress through a domain below the current layout: `partition` and all before it are rewritten. */
export async function recordUpgraded(domain: string, partition: string): Promise<void> {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(domain),
      UpdateExpression: 'SET #upgraded = :partition',
      ExpressionAttributeNames: { '#upgraded': 'upgraded' },
      ExpressionAttributeValues: { ':partition': partition },
    }),
  );
}

async function ensureItem(domain: string): Promise<void> {
  await documentClient().send(
    new UpdateCommand({
      TableName: tableNames().counters,
      Key: key(domain),
      UpdateExpression: 'SET pending = if_not_exists(pending, :empty), superseded = if_not_exists(superseded, :empty)',
      ExpressionAttributeValues: { ':empty': {} },
    }),
  );
}
