import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { HeadObjectCommand, NotFound, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { ImportOptions } from '../local/store/importer.js';
import type { ImportRecord } from '../local/store/imports.js';
import { derivedRelations, type DerivedFolder } from '../shared/events/derived-relations.js';
import { hideFiles, showFiles } from '../shared/store/file-states-repo.js';
import type { DomainDays } from '../shared/store/domain-days-repo.js';
import { listing } from './s3-objects.js';

// The events bucket as the store writer sees it (docs/STORAGE.md): where each relation's files go, the import
// records that make an input count once, and the days a domain already has. `npm run import -- --s3` and the
// ingest function write through these same functions.

/** `s3://bucket/prefix` → its parts; the prefix is where `domain=.../dt=...` folders go (the stack's `events`). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) throw new Error(`not an S3 location: ${url} (expected s3://bucket/prefix)`);
  return { bucket: match[1]!, prefix: (match[2] ?? '').replace(/\/+$/, '') };
}

/** Uploads staged files to S3 at the same relative keys; each PutObject is atomic, so readers never see half a file. */
export function s3Publisher(url: string, client = new S3Client({})): (stagingDir: string, files: string[]) => Promise<void> {
  const { bucket, prefix } = parseS3Url(url);
  return async (stagingDir, files) => {
    const queue = [...files];
    const upload = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        const key = [prefix, name.split('\\').join('/')].filter(Boolean).join('/');
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: await readFile(join(stagingDir, name)), ContentType: 'application/vnd.apache.parquet' }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, files.length) }, upload));
  };
}

/** The first and last `dt=` folder of a domain's events already at `url` (one listing of its day folders). */
export function s3StoredDays(url: string, client = new S3Client({})): (domain: string) => Promise<DomainDays | undefined> {
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
export function s3ImportRecords(url: string, client = new S3Client({})): { has(digest: string): Promise<boolean>; record(record: ImportRecord): Promise<void> } {
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
        if (error instanceof NotFound || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
        throw error;
      }
    },
    record: async (record) => {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key(record.digest), Body: JSON.stringify(record), ContentType: 'application/json' }));
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
 * Everything the importer needs to write to the events prefix at `url` (`s3://bucket/events`): the publishers of
 * the events and of each derived relation, the bucket's import records, its stored days, and the file states that
 * keep an import's files from queries until all are up.
 */
export function s3Destination(url: string, client = new S3Client({})): Required<Pick<ImportOptions, 'publish' | 'publishDerived' | 'publishedImports' | 'storedDays' | 'visibility'>> {
  return {
    visibility: { hide: (domain, files) => hideFiles(domain, files), show: showFiles },
    publish: s3Publisher(url, client),
    publishDerived: Object.fromEntries(derivedRelations.map((r) => [r.folder, s3Publisher(derivedUrlOf(url, r.folder), client)])) as Record<DerivedFolder, ReturnType<typeof s3Publisher>>,
    publishedImports: s3ImportRecords(url, client),
    storedDays: s3StoredDays(url, client),
  };
}
