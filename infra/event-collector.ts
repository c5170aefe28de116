import { Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { CfnDeliveryStream } from 'aws-cdk-lib/aws-kinesisfirehose';
import { Construct } from 'constructs';
import type { EventLake } from './event-lake.js';
import { INCOMING_PREFIX } from './store-writers.js';

// The collector's delivery stream (docs/COLLECTING.md, "On the stack"): POST /api/event puts each event's lines as
// records; Firehose buffers them and writes gzip NDJSON objects under `incoming/collected/`, which S3 announces to
// the ingest function like any producer's object (docs/DEPLOY.md, "Collecting"). The stream's role may write only
// there and under `collect-errors/` (the construct library's S3 destination would grant read, write and delete on
// the whole bucket).

/** Where the stream's objects land: under the ingest prefix, so the ingest function imports them. */
export const COLLECTED_PREFIX = `${INCOMING_PREFIX}collected/`;
/** Records Firehose could not deliver, kept for the operator outside `incoming/`: never ingested. */
export const COLLECT_ERRORS_PREFIX = 'collect-errors/';
/** An object at least every minute, or sooner at 5 MiB: events reach the store a minute or so after they happen. */
export const COLLECT_BUFFER_SECONDS = 60;
export const COLLECT_BUFFER_MIB = 5;

export class EventCollector extends Construct {
  readonly stream: CfnDeliveryStream;

  constructor(scope: Construct, id: string, lake: EventLake) {
    super(scope, id);
    const stack = Stack.of(this);
    const bucket = lake.eventsBucket;
    const role = new Role(this, 'DeliveryRole', {
      assumedBy: new ServicePrincipal('firehose.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': stack.account } },
      }),
    });
    // What AWS's guide lists for an S3 destination, narrowed to the stream's two prefixes.
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetBucketLocation', 's3:ListBucket', 's3:ListBucketMultipartUploads'],
        resources: [bucket.bucketArn],
      }),
    );
    const prefixes = [COLLECTED_PREFIX, COLLECT_ERRORS_PREFIX];
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:AbortMultipartUpload', 's3:GetObject'],
        resources: prefixes.map((prefix) => bucket.arnForObjects(`${prefix}*`)),
      }),
    );
    const bucketId = stack.getLogicalId(bucket.node.defaultChild as never);
    for (const prefix of prefixes)
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
        reason:
          'Firehose writes one object per buffer under the collector prefix (and failed records under its error prefix), each named by its time and a UUID, so only a prefix can name them.',
      });

    this.stream = new CfnDeliveryStream(this, 'Stream', {
      deliveryStreamType: 'DirectPut',
      // Records at rest in Firehose's buffer are encrypted with a key AWS owns: no key policy, no KMS calls to grant.
      deliveryStreamEncryptionConfigurationInput: { keyType: 'AWS_OWNED_CMK' },
      extendedS3DestinationConfiguration: {
        bucketArn: bucket.bucketArn,
        roleArn: role.roleArn,
        prefix: `${COLLECTED_PREFIX}!{timestamp:yyyy/MM/dd/HH}/`,
        errorOutputPrefix: `${COLLECT_ERRORS_PREFIX}!{firehose:error-output-type}/!{timestamp:yyyy/MM/dd}/`,
        bufferingHints: { intervalInSeconds: COLLECT_BUFFER_SECONDS, sizeInMBs: COLLECT_BUFFER_MIB },
        compressionFormat: 'GZIP',
        fileExtension: '.ndjson.gz',
      },
    });
    // The role's policy must exist before Firehose first assumes it to deliver.
    this.stream.node.addDependency(role);
  }

  /** What the collector function does: PutRecordBatch on this stream, nothing else. */
  grantPut(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: ['firehose:PutRecordBatch'], resources: [this.stream.attrArn] }),
    );
  }

  get streamName(): string {
    return this.stream.ref;
  }
}
