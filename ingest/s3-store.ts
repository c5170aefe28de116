import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand, NotFound, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ImportDestination, ImportRecord } from '../writer/destination.js';
import { parquetFilesUnder } from '../writer/parquet-files.js';
import { S3_CODECS } from '../writer/parquet-codec.js';
import { forgetImportCount, recordImportedEventsOnce } from '../shared/limits/limiter.js';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { hideFiles, showFiles, waitToUpload } from '../shared/store/file-states-repo.js';
import type { DomainDays } from '../shared/store/domain-days-repo.js';
import { listing } from './s3-objects.js';

// The events bucket as the store writer sees it (docs/STORAGE.md): where each relation's files go, the import
// records that make an input count once, and the days a domain already has. `npm run import -- --s3` and the
// ingest function write through these same functions.

/** The HTTP status S3 answered a failed call with, when the SDK's error carries it. */
function httpStatusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** `s3://bucket/prefix` → its parts; the prefix is where `domain=.../dt=...` folders go (the stack's `events`). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) throw new Error(`not an S3 location: ${url} (expected s3://bucket/prefix)`);
  return { bucket: match[1]!, prefix: (match[2] ?? '').replace(/\/+$/, '') };
}

/**
 * Uploads staged files to S3 at the same relative keys; each PutObject is atomic, so readers never see half a file.
 * Each is conditional (`If-None-Match: *`): a file already there stays as it is. A name holds one content (an import's
 * digest, a compaction's own name), and a file readers may see is never written again, since its new date would
 * leave it out of the queries whose file states were read before (shared/store/file-states-repo.ts).
 */
export function s3Publisher(
  url: string,
  client = new S3Client({}),
): (stagingDir: string, files: string[]) => Promise<void> {
  const { bucket, prefix } = parseS3Url(url);
  return async (stagingDir, files) => {
    const queue = [...files];
    const upload = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        const key = [prefix, name.split('\\').join('/')].filter(Boolean).join('/');
        await client
          .send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: key,
              Body: await readFile(join(stagingDir, name)),
              ContentType: 'application/vnd.apache.parquet',
              IfNoneMatch: '*',
            }),
          )
          .catch((error: unknown) => {
            // Uploaded before (by a run that died, or by another delivery of the same input).
            if (httpStatusOf(error) !== 412) throw error;
          });
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, files.length) }, upload));
  };
}

/** The first and last `dt=` folder of a domain's events already at `url` (one listing of its day folders). */
export function s3StoredDays(
  url: string,
  client = new S3Client({}),
): (domain: string) => Promise<DomainDays | undefined> {
  const { bucket, prefix } = parseS3Url(url);
  return async (domain) => {
    const under = `${[prefix, `domain=${domain}`].filter(Boolean).join('/')}/`;
    const days: string[] = [];
    for await (const page of listing({ client, bucket }, under, '/')) {
      for (const p of page.CommonPrefixes ?? []) {
        const day = /dt=(\d{4}-\d{2}-\d{2})\/$/.exec(p.Prefix ?? '')?.[1];
        if (day) days.push(day);
      }
    }
    days.sort();
    return days.length ? { firstDay: days[0]!, lastDay: days[days.length - 1]! } : undefined;
  };
}

/**
 * The import records of the bucket of `url`: `imports/<digest>.json` beside the events prefix, outside every Glue
 * table's location.
 */
export function s3ImportRecords(
  url: string,
  client = new S3Client({}),
): { has(digest: string): Promise<boolean>; record(record: ImportRecord): Promise<void> } {
  const { bucket, prefix } = parseS3Url(url);
  const parent = prefix.split('/').slice(0, -1).join('/');
  const key = (digest: string) => {
    if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error('an import digest is 64 hex digits');
    return [parent, 'imports', `${digest}.json`].filter(Boolean).join('/');
  };
  return {
    has: async (digest) => {
      try {
        await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key(digest) }));
        return true;
      } catch (error) {
        if (error instanceof NotFound || httpStatusOf(error) === 404) return false;
        throw error;
      }
    },
    record: async (record) => {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: key(record.digest),
          Body: JSON.stringify(record),
          ContentType: 'application/json',
        }),
      );
    },
  };
}

/**
 * Where a derived relation of the events at `url` goes: its folder beside the events prefix (the stack's
 * `s3://bucket/events` → `s3://bucket/sessions`, `s3://bucket/pageviews`: the locations of its Glue tables,
 * infra/event-lake.ts).
 */
export function derivedUrlOf(url: string, folder: string): string {
  const { bucket, prefix } = parseS3Url(url);
  const parent = prefix.split('/').slice(0, -1).join('/');
  return `s3://${bucket}/${[parent, folder].filter(Boolean).join('/')}`;
}

/**
 * The events prefix at `url` (`s3://bucket/events`) as an import's destination (writer/destination.ts), staging under
 * `stagingDir`. S3 has no transactions: the import's files are named after its digest, so a retry after a crash
 * midway keeps what it had written and uploads the rest; they are hidden from queries (file states in DynamoDB) from
 * uploadDelayMs() before the first upload until after the last; derived files go up before the event files; usage is
 * counted once per digest; the import's record is written last.
 */
export function s3Destination(url: string, stagingDir: string, client = new S3Client({})): ImportDestination {
  const events = s3Publisher(url, client);
  const derived = Object.fromEntries(
    derivedRelations.map((r) => [r.folder, s3Publisher(derivedUrlOf(url, r.folder), client)]),
  ) as Record<DerivedFolder, ReturnType<typeof s3Publisher>>;
  const records = s3ImportRecords(url, client);
  return {
    store: 's3',
    codecs: S3_CODECS,
    stagingDir,
    fileName: (digest) => `${digest.slice(0, 32)}.parquet`,
    // Settled after reading: a record found then may need its files shown again.
    importedBefore: async () => false,
    settleImported: async (digest, files, domains) => {
      if (!(await records.has(digest))) return false;
      // Recorded, so every file is up; shown again in case the process died between the record and the showing,
      // and its digest dropped from the month's usage item in case it died between the record and that.
      for (const [domain, names] of byDomain(files)) await showFiles(domain, names);
      for (const domain of domains) await forgetImportCount(domain, digest, new Date());
      return true;
    },
    storedDays: s3StoredDays(url, client),
    publish: async (staged) => {
      const { record } = staged;
      const hidden = byDomain(staged.files);
      let hiddenAt = Date.now();
      for (const [domain, names] of hidden) hiddenAt = await hideFiles(domain, names);
      // A reader that read the file states just before the hide leaves out files uploaded from now on by their date.
      await waitToUpload(hiddenAt);
      // Derived files first: an event file readers can see always has its derived files beside it.
      for (const { folder } of derivedRelations)
        await derived[folder](staged.derivedDirs[folder], parquetFilesUnder(staged.derivedDirs[folder]));
      await events(staged.eventsDir, staged.files);
      // Counted once per input whatever the retries, then recorded: a record means rows and usage are both in.
      const countedAt = new Date();
      for (const [domain, count] of Object.entries(record.domains))
        await recordImportedEventsOnce(domain, count, record.digest, countedAt);
      await records.record(record);
      // The record now stops any retry before it counts: the month's item need not keep the digest.
      for (const domain of Object.keys(record.domains)) await forgetImportCount(domain, record.digest, countedAt);
      for (const [domain, names] of hidden) await showFiles(domain, names);
      return true;
    },
  };
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
