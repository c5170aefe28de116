import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { S3Client } from '@aws-sdk/client-s3';
import { writerS3Client } from '../ingest/s3-client.js';
import { ingestObject } from '../ingest/ingest-object.js';
import { createdObjects } from '../ingest/s3-notifications.js';
import { removeStaleWorkFolders } from '../ingest/work-dirs.js';
import { logger } from '../shared/log.js';

// The ingest function (docs/DEPLOY.md, "Feeding the stack"): S3 notifications of objects put under `incoming/`
// arrive through an SQS queue; each object is imported into the store and moved away. A message that fails is
// reported back alone (partial batch response) and redelivered; after the queue's receive limit it goes to the
// dead-letter queue, whose alarm someone sees. Every step is repeatable, so a redelivery never doubles anything.

/** The handler over an S3 client (tests pass one pointed at their S3 server). */
export function ingestHandler(
  client: S3Client,
  workDir = process.env.INGEST_WORK_DIR ?? '/tmp',
  eventsBucket = process.env.EVENTS_BUCKET,
) {
  return (event: SQSEvent) => ingestMessages(event, client, workDir, eventsBucket);
}

export const handler = ingestHandler(writerS3Client());

/** Longer than the function's timeout (10 minutes): a work folder this old belongs to no running invocation. */
const STALE_WORK_MS = 15 * 60_000;

async function ingestMessages(
  event: SQSEvent,
  client: S3Client,
  workDir: string,
  eventsBucket: string | undefined,
): Promise<SQSBatchResponse> {
  const stale = await removeStaleWorkFolders(workDir, STALE_WORK_MS);
  if (stale.length) logger.warn('removed work folders of invocations that did not finish', { folders: stale });
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const message of event.Records) {
    try {
      for (const { bucket, key } of createdObjects(message.body)) {
        if (eventsBucket && bucket !== eventsBucket) {
          logger.warn('notification of another bucket ignored', { bucket, key });
          continue;
        }
        const outcome = await ingestObject(key, { client, bucket, workDir });
        logger.info('object ingested', { ...outcome });
      }
    } catch (error) {
      logger.error('ingest failed; the message is retried', { messageId: message.messageId, error: error as Error });
      batchItemFailures.push({ itemIdentifier: message.messageId });
    }
  }
  return { batchItemFailures };
}
