import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { S3_COPY_MAX_BYTES } from '../shared/aws/service-limits.js';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { importLines, importNdjson, type ImportReport } from '../writer/importer.js';
import { UnwritableRows } from '../writer/derived-writer.js';
import { parquetLines, UnreadableObject } from './parquet-lines.js';
import { isNoSuchKey } from './s3-objects.js';
import { s3Destination } from './s3-store.js';

// One object a producer put under `incoming/` in the events bucket, made part of the store (docs/DEPLOY.md,
// "Feeding the stack"): read with the importer the CLI uses (same rules, same files, same exactly-once record),
// then its report written and the object moved away. Every step is safe to repeat, so a redelivered or duplicated
// notification, or a retry after a crash at any step, ends in the state one clean run leaves:
//   1. the import publishes derived files, then event files, counts usage once per input digest, and writes the
//      input's record last (a second import of the same bytes writes nothing);
//   2. a report of the rejected lines, when there are any, goes to `reports/<name>.json` (overwritten whole): a
//      folder of its own, so that no object's name can reach another object's report, nor a moved object a report;
//   3. the object is copied to `ingested/<name>` (or `rejected/<name>` when it cannot be read at all), then deleted
//      from `incoming/`. An object no longer there was finished by an earlier delivery.
// Object keys under `incoming/` must be unique (Firehose's are): a key put again before its first copy was moved
// is ingested as whatever it holds when it is read.

export const INCOMING_PREFIX = 'incoming/';
export const INGESTED_PREFIX = 'ingested/';
export const REJECTED_PREFIX = 'rejected/';
export const REPORTS_PREFIX = 'reports/';

/** The largest object accepted, as stored (compressed or not); a larger one is rejected whole. */
export const MAX_OBJECT_BYTES = 2 * 1024 ** 3;
/** The most a gzip object may inflate to; beyond it the object is rejected whole (a gzip bomb stops here). */
export const MAX_INFLATED_BYTES = 4 * 1024 ** 3;

export interface IngestTarget {
  client: S3Client;
  bucket: string;
  /** A folder for the object and the import's staging files (Lambda: under /tmp). */
  workDir: string;
  /** The sizes above which an object is rejected, and cannot be moved by one CopyObject (tests lower them). */
  limits?: { maxObjectBytes: number; copyMaxBytes: number };
}

export type IngestOutcome =
  | { key: string; outcome: 'ingested' | 'already-ingested'; rows: number; rejectedLines: number }
  | { key: string; outcome: 'rejected'; reason: string }
  /** Moved by an earlier delivery, or deleted by someone else: nothing to do. */
  | { key: string; outcome: 'absent' }
  /** Not under `incoming/` (a notification set up wider than the stack's). */
  | { key: string; outcome: 'ignored' };

export interface IngestReportFile {
  source: string;
  /** The object's valid rows, all in the store (whichever delivery wrote them). */
  rowsAccepted: number;
  rejected: ImportReport['rejected'];
  /** Set when the object could not be read at all; then nothing of it was written. */
  error?: string;
}

export async function ingestObject(key: string, target: IngestTarget): Promise<IngestOutcome> {
  if (!key.startsWith(INCOMING_PREFIX) || key.length === INCOMING_PREFIX.length) return { key, outcome: 'ignored' };
  const name = key.slice(INCOMING_PREFIX.length);
  const dir = join(target.workDir, `ingest-${randomBytes(6).toString('hex')}`);
  await mkdir(dir, { recursive: true });
  try {
    const destination = s3Destination(`s3://${target.bucket}/events`, join(dir, 'staging'), target.client);
    let report: ImportReport;
    try {
      const file = await download(target, key, dir);
      report = name.endsWith('.parquet')
        ? await importLines(parquetLines(file), destination)
        : await importNdjson(file, destination);
    } catch (error) {
      if (isNoSuchKey(error)) return { key, outcome: 'absent' };
      if (!(error instanceof UnreadableObject || error instanceof UnwritableRows)) throw error;
      const report = { source: key, rowsAccepted: 0, rejected: [], error: error.message };
      if (error instanceof TooLargeObject && error.bytes > (target.limits?.copyMaxBytes ?? S3_COPY_MAX_BYTES)) {
        // One CopyObject moves at most 5 GB: such an object stays under incoming/, its report says why.
        await writeReport(target, name, {
          ...report,
          error: `${error.message}; left under ${INCOMING_PREFIX}, delete it once split`,
        });
        return { key, outcome: 'rejected', reason: error.message };
      }
      await finish(target, key, name, REJECTED_PREFIX, report);
      return { key, outcome: 'rejected', reason: error.message };
    }
    // The same report whichever delivery writes it: a redelivery after a crash rewrites it identically.
    await finish(
      target,
      key,
      name,
      INGESTED_PREFIX,
      report.rejected.length > 0
        ? { source: key, rowsAccepted: report.rowsAccepted, rejected: report.rejected }
        : undefined,
    );
    return {
      key,
      outcome: report.alreadyImported ? 'already-ingested' : 'ingested',
      rows: report.rowsWritten,
      rejectedLines: report.rejected.length,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Writes the report (when there is one), then moves the object under `prefix`: copy, then delete. */
async function finish(
  target: IngestTarget,
  key: string,
  name: string,
  prefix: string,
  report: IngestReportFile | undefined,
): Promise<void> {
  const { client, bucket } = target;
  if (report) await writeReport(target, name, report);
  try {
    await client.send(
      new CopyObjectCommand({
        Bucket: bucket,
        Key: `${prefix}${name}`,
        CopySource: `${bucket}/${encodeURIComponent(key).replace(/%2F/g, '/')}`,
      }),
    );
  } catch (error) {
    // Gone meanwhile: a concurrent delivery of the same notification moved it.
    if (isNoSuchKey(error)) return;
    throw error;
  }
  await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
}

async function writeReport(target: IngestTarget, name: string, report: IngestReportFile): Promise<void> {
  await target.client.send(
    new PutObjectCommand({
      Bucket: target.bucket,
      Key: `${REPORTS_PREFIX}${name}.json`,
      Body: JSON.stringify(report, null, 1),
      ContentType: 'application/json',
    }),
  );
}

/** An object over MAX_OBJECT_BYTES, with its size. */
class TooLargeObject extends UnreadableObject {
  constructor(
    readonly bytes: number,
    limit: number,
  ) {
    super(`object of ${bytes} bytes is larger than ${limit} bytes; split it`);
  }
}

/**
 * The object as an NDJSON or Parquet file in `dir`: gzip (by its magic bytes, whatever the name) is inflated on the
 * way, bounded by MAX_INFLATED_BYTES.
 */
async function download(target: IngestTarget, key: string, dir: string): Promise<string> {
  const object = await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }));
  const limit = target.limits?.maxObjectBytes ?? MAX_OBJECT_BYTES;
  if ((object.ContentLength ?? 0) > limit) {
    (object.Body as { destroy?: () => void } | undefined)?.destroy?.();
    throw new TooLargeObject(object.ContentLength!, limit);
  }
  const raw = join(dir, 'object');
  await pipeline(object.Body as NodeJS.ReadableStream, createWriteStream(raw));
  const head = Buffer.alloc(2);
  const handle = await open(raw);
  try {
    await handle.read(head, 0, 2, 0);
  } finally {
    await handle.close();
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) return raw;
  const inflated = join(dir, 'inflated');
  let bytes = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > MAX_INFLATED_BYTES)
        done(new UnreadableObject(`gzip object inflates to more than ${MAX_INFLATED_BYTES} bytes; split it`));
      else done(null, chunk);
    },
  });
  try {
    await pipeline(createReadStream(raw), createGunzip(), bounded, createWriteStream(inflated));
  } catch (error) {
    if (error instanceof UnreadableObject) throw error;
    throw new UnreadableObject(`not a readable gzip object (${(error as Error).message})`);
  } finally {
    await rm(raw, { force: true });
  }
  return inflated;
}
