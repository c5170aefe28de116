import { Duration, Size, Stack } from 'aws-cdk-lib';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Compression, DeliveryStream, S3Bucket, StreamEncryption } from 'aws-cdk-lib/aws-kinesisfirehose';
import { Construct } from 'constructs';
import type { EventLake } from './event-lake.js';
import { INCOMING_PREFIX } from './store-writers.js';

// The collector's delivery stream (docs/COLLECTING.md, "On the stack"): POST /api/event puts each event's lines as
// records; Firehose buffers them and writes gzip NDJSON objects under `incoming/collected/`, which S3 announces to
// the ingest function like any producer's object (docs/DEPLOY.md, "Collecting").

/** Where the stream's objects land: under the ingest prefix, so the ingest function imports them. */
export const COLLECTED_PREFIX = `${INCOMING_PREFIX}collected/`;
/** An object at least every minute, or sooner at 5 MiB: events reach the store a minute or so after they happen. */
export const COLLECT_BUFFER_SECONDS = 60;
export const COLLECT_BUFFER_MIB = 5;

export class EventCollector extends Construct {
  readonly stream: DeliveryStream;

  constructor(scope: Construct, id: string, lake: EventLake) {
    super(scope, id);
    this.stream = new DeliveryStream(this, 'Stream', {
      // Records at rest in Firehose's buffer encrypted with a key AWS owns: no key policy, no KMS calls to grant.
      encryption: StreamEncryption.awsOwnedKey(),
      destination: new S3Bucket(lake.eventsBucket, {
        dataOutputPrefix: `${COLLECTED_PREFIX}!{timestamp:yyyy/MM/dd/HH}/`,
        // Outside `incoming/`: records Firehose could not deliver are kept for the operator, never ingested twice.
        errorOutputPrefix: 'collect-errors/!{firehose:error-output-type}/!{timestamp:yyyy/MM/dd}/',
        bufferingInterval: Duration.seconds(COLLECT_BUFFER_SECONDS),
        bufferingSize: Size.mebibytes(COLLECT_BUFFER_MIB),
        compression: Compression.GZIP,
        fileExtension: '.ndjson.gz',
      }),
    });
    // The construct adds a mapping of Firehose's address blocks per region (its id with `/` spelled `--`), for streams that deliver into a VPC;
    // this one delivers to S3 and never reads it, and CloudFormation's linter flags a mapping nothing reads.
    Stack.of(this).node.tryRemoveChild('@aws-cdk--aws-kinesisfirehose.CidrBlocks');
  }

  /** What the collector function does: PutRecordBatch on this stream, nothing else. */
  grantPut(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['firehose:PutRecordBatch'], resources: [this.stream.deliveryStreamArn] }),
    );
  }
}
