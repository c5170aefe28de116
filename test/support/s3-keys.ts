import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** Every key of `bucket`, sorted, over all pages of the listing. */
export async function keysOf(s3: S3Client, bucket: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.NextContinuationToken;
  } while (token);
  return keys.sort();
}
