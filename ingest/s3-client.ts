import { S3Client } from '@aws-sdk/client-s3';

/**
 * The writers' S3 client on Lambda. AWS_S3_FORCE_PATH_STYLE=true asks for path-style addresses, which an S3-compatible
 * server on loopback needs (moto, LocalStack, reached through AWS_ENDPOINT_URL_S3): the local Lambda runtime sets
 * both; the stack sets neither.
 */
export function writerS3Client(env: NodeJS.ProcessEnv = process.env): S3Client {
  return new S3Client({ forcePathStyle: env.AWS_S3_FORCE_PATH_STYLE === 'true' });
}
