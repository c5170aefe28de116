import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  GetObjectCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  type S3Client,
} from '@aws-sdk/client-s3';

// The writers' two ways of reading the bucket in bulk: listing a prefix page by page, and streaming an object to a
// local file (Lambda: under /tmp), so that no object need fit in memory.

export interface BucketAccess {
  client: S3Client;
  bucket: string;
}

/** Every page of the listing of `prefix` (with `delimiter`, its common prefixes too). */
export async function* listing(
  target: BucketAccess,
  prefix: string,
  delimiter?: string,
): AsyncGenerator<ListObjectsV2CommandOutput> {
  let token: string | undefined;
  do {
    const page = await target.client.send(
      new ListObjectsV2Command({
        Bucket: target.bucket,
        Prefix: prefix,
        Delimiter: delimiter,
        ContinuationToken: token,
      }),
    );
    yield page;
    token = page.NextContinuationToken;
  } while (token);
}

/** Streams the object `key` to the file `local`, making its folder. */
export async function download(target: BucketAccess, key: string, local: string): Promise<void> {
  const object = await target.client.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }));
  await mkdir(dirname(local), { recursive: true });
  await pipeline(object.Body as NodeJS.ReadableStream, createWriteStream(local));
}

/** Whether `error` is S3's answer for an object that is not there. */
export function isNoSuchKey(error: unknown): boolean {
  return (error as { name?: string } | undefined)?.name === 'NoSuchKey';
}
