import { CreateDeliveryStreamCommand, FirehoseClient } from '@aws-sdk/client-firehose';

// The collector's delivery stream, made on an AWS-compatible server (moto) for the stack's functions run locally:
// records written to it land in the bucket under `incoming/collected/`, as the stack's stream writes them
// (infra/event-collector.ts), uncompressed (moto writes what it is given; the ingest function reads either).

export async function createCollectorStream(
  server: { endpoint: string; region: string; credentials: { accessKeyId: string; secretAccessKey: string } },
  bucket: string,
  stream = 'collected-events',
): Promise<string> {
  const firehose = new FirehoseClient({
    endpoint: server.endpoint,
    region: server.region,
    credentials: server.credentials,
  });
  await firehose.send(
    new CreateDeliveryStreamCommand({
      DeliveryStreamName: stream,
      DeliveryStreamType: 'DirectPut',
      ExtendedS3DestinationConfiguration: {
        BucketARN: `arn:aws:s3:::${bucket}`,
        RoleARN: 'arn:aws:iam::123456789012:role/collector-delivery',
        Prefix: 'incoming/collected/',
        BufferingHints: { IntervalInSeconds: 60, SizeInMBs: 5 },
      },
    }),
  );
  firehose.destroy();
  return stream;
}
