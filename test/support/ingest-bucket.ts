import {
  CreateBucketCommand,
  PutBucketNotificationConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import type { MotoServer } from '../../local/tools/moto-server.js';

// An events bucket on moto's server set up as the stack sets it up: objects created under `incoming/` are announced
// by S3 to an SQS queue. `deliver` plays Lambda's SQS poller: it receives the queue's messages, passes them to the
// handler as the SQS event Lambda would, and deletes the messages the handler did not report as failed.

export interface IngestBucket {
  bucket: string;
  s3: S3Client;
  put(key: string, body: string | Uint8Array): Promise<void>;
  /** Every message waiting, to the handler in batches of `batchSize` (`twice`: each batch delivered twice); returns the messages it failed. */
  deliver(
    handler: (event: SQSEvent) => Promise<SQSBatchResponse>,
    options?: { batchSize?: number; twice?: boolean },
  ): Promise<string[]>;
  /** The raw messages waiting, left in the queue's visibility timeout (for duplicate deliveries). */
  receive(): Promise<SQSRecord[]>;
}

let buckets = 0;

export function motoClients(moto: MotoServer): { s3: S3Client; sqs: SQSClient } {
  const config = { endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials };
  return { s3: new S3Client({ ...config, forcePathStyle: true }), sqs: new SQSClient(config) };
}

export async function ingestBucket(
  moto: MotoServer,
  name = `ingest-${++buckets}-${Date.now()}`,
): Promise<IngestBucket> {
  const { s3, sqs } = motoClients(moto);
  await s3.send(new CreateBucketCommand({ Bucket: name }));
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `${name}-queue`, Attributes: { VisibilityTimeout: '0' } }),
  );
  const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }))).Attributes!
    .QueueArn!;
  await s3.send(
    new PutBucketNotificationConfigurationCommand({
      Bucket: name,
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            QueueArn: arn,
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'incoming/' }] } },
          },
        ],
      },
    }),
  );
  const receive = async (): Promise<SQSRecord[]> => {
    const records: SQSRecord[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 300 }),
      );
      if (Messages.length === 0) return records;
      for (const m of Messages) {
        records.push({
          messageId: m.MessageId!,
          receiptHandle: m.ReceiptHandle!,
          body: m.Body!,
          attributes: {} as SQSRecord['attributes'],
          messageAttributes: {},
          md5OfBody: m.MD5OfBody!,
          eventSource: 'aws:sqs',
          eventSourceARN: arn,
          awsRegion: moto.region,
        });
      }
    }
  };
  return {
    bucket: name,
    s3,
    put: async (key, body) => {
      await s3.send(new PutObjectCommand({ Bucket: name, Key: key, Body: body }));
    },
    receive,
    deliver: async (handler, options = {}) => {
      const records = await receive();
      const failed: string[] = [];
      const size = options.batchSize ?? 1;
      for (let i = 0; i < records.length; i += size) {
        const batch = records.slice(i, i + size);
        const { batchItemFailures } = await handler({ Records: batch });
        if (options.twice) await handler({ Records: batch });
        const failures = new Set(batchItemFailures.map((f) => f.itemIdentifier));
        for (const r of batch) {
          // A failed message is visible again at once, as it would be after its visibility timeout.
          if (failures.has(r.messageId)) {
            failed.push(r.messageId);
            await sqs.send(
              new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle: r.receiptHandle, VisibilityTimeout: 0 }),
            );
          } else await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: r.receiptHandle }));
        }
      }
      return failed;
    },
  };
}
