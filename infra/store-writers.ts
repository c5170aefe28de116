import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, Role, ServicePrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { EventType } from 'aws-cdk-lib/aws-s3';
import { SqsDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { derivedRelations } from '../shared/events/derived-relations.js';
import type { DataTables } from './data-tables.js';
import { EVENTS_PREFIX, type EventLake } from './event-lake.js';
import { lambdaCode, projectRoot } from './lambda-code.js';
import { SERVICE_NAME } from './route-function.js';
import type { StackSettings } from './settings.js';

// The functions that keep the S3 store correct and fast with no laptop in the loop (docs/DEPLOY.md, "Feeding the
// stack"): objects put under `incoming/` are announced by S3 to an SQS queue and imported by the ingest function
// (redelivered on failure, dead-lettered after INGEST_MAX_RECEIVES tries, with an alarm on the dead letters); an
// EventBridge schedule runs the upkeep function, one run at a time (a lease in DynamoDB), to compact crowded
// partitions.

export const INCOMING_PREFIX = 'incoming/';
/** Upkeep's own objects: each domain's fragment index (ingest/fragment-index.ts, FRAGMENT_INDEX_PREFIX). */
const UPKEEP_PREFIX = 'upkeep/';
const INGEST_TIMEOUT = Duration.minutes(10);
export const INGEST_MAX_RECEIVES = 5;
const UPKEEP_TIMEOUT = Duration.minutes(15);

export interface StoreWritersProps {
  lake: EventLake;
  tables: DataTables;
  settings: StackSettings;
}

export class StoreWriters extends Construct {
  readonly ingest: NodejsFunction;
  readonly upkeep: NodejsFunction;
  readonly queue: Queue;
  readonly deadLetters: Queue;
  readonly alarmTopic: Topic;

  constructor(scope: Construct, id: string, { lake, tables, settings }: StoreWritersProps) {
    super(scope, id);
    const bucket = lake.eventsBucket;

    this.deadLetters = new Queue(this, 'DeadLetters', {
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'Incoming', {
      // AWS's advice for a Lambda source: at least six times the function's timeout.
      visibilityTimeout: Duration.minutes(INGEST_TIMEOUT.toMinutes() * 6),
      retentionPeriod: Duration.days(14),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetters, maxReceiveCount: INGEST_MAX_RECEIVES },
    });
    bucket.addEventNotification(EventType.OBJECT_CREATED, new SqsDestination(this.queue), { prefix: INCOMING_PREFIX });
    // CDK configures the notification through a custom resource of its own, a singleton beside the stack's constructs.
    const notificationsHandler = Stack.of(this).node.children.find((c) =>
      c.node.id.startsWith('BucketNotificationsHandler'),
    );
    if (notificationsHandler) {
      Validations.of(notificationsHandler).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
        reason:
          "CDK's own handler that sets the bucket notification at deploy time uses AWSLambdaBasicExecutionRole for its logs; it holds no data permission beyond PutBucketNotification on this bucket.",
      });
    }

    // CloudWatch publishes an alarm's notification with its own service principal: the AWS-managed SNS key cannot
    // allow it (its policy is AWS's), so the topic has a key of its own whose policy lets CloudWatch encrypt, and a
    // topic policy that lets this account's alarms publish.
    const topicKey = new Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the ingest alarm topic; CloudWatch alarms of this account may use it to publish',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const account = Stack.of(this).account;
    topicKey.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchAlarmsPublishEncrypted',
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': account } },
      }),
    );
    this.alarmTopic = new Topic(this, 'AlarmTopic', {
      displayName: 'Analytics ingest: objects that could not be ingested',
      enforceSSL: true,
      masterKey: topicKey,
    });
    const alarm = new Alarm(this, 'DeadLettersAlarm', {
      alarmDescription: `Objects under ${INCOMING_PREFIX} failed ${INGEST_MAX_RECEIVES} ingest attempts; their notifications wait in the dead-letter queue (docs/DEPLOY.md, "When the alarm fires").`,
      metric: this.deadLetters.metricApproximateNumberOfMessagesVisible({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.notifyOn(alarm);

    const environment = {
      COUNTERS_TABLE: tables.counters.tableName,
      EVENTS_BUCKET: bucket.bucketName,
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      LOG_LEVEL: settings.logLevel,
      NODE_OPTIONS: '--enable-source-maps',
      // DuckDB's buffer pool within the functions' 4,096 MB, leaving the rest to Node and DuckDB's memory outside it.
      DUCKDB_MEMORY_LIMIT: '3GB',
    };
    const writer = (name: string, handler: string, props: { timeout: Duration; memorySize: number }) => {
      const logGroup = new LogGroup(this, `${name}Logs`, {
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const role = new Role(this, `${name}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
      logGroup.grantWrite(role);
      tables.grantStoreWriting(role);
      const fn = new NodejsFunction(this, name, {
        description: `${handler}: writes the events store`,
        entry: `${projectRoot}functions/${handler}.ts`,
        handler: 'handler',
        runtime: Runtime.NODEJS_22_X,
        architecture: Architecture.ARM_64,
        ...props,
        ephemeralStorageSize: Size.gibibytes(10),
        role,
        logGroup,
        environment,
        ...lambdaCode({ withDuckDb: true }),
      });
      Validations.of(fn).acknowledge({
        id: 'AwsSolutions-L1',
        reason:
          'Node.js 22 is the runtime this code is built and tested for (issue 5); move to a newer one deliberately, with the test suite.',
      });
      return fn;
    };

    // 2 vCPUs from 3,538 MB on: DuckDB's two threads each get a core.
    this.ingest = writer('Ingest', 'ingest-events', { timeout: INGEST_TIMEOUT, memorySize: 4096 });
    // At most settings.ingestMaxConcurrency ingests at once (2 by default, SQS's least): the rest of the account's
    // concurrency stays with the API, even in a new account whose quota is small.
    this.ingest.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        maxConcurrency: settings.ingestMaxConcurrency,
      }),
    );
    grantObjects(this.ingest.role!, bucket.bucketArn, {
      read: [INCOMING_PREFIX, 'imports/'],
      write: [
        'ingested/',
        'rejected/',
        'reports/',
        'imports/',
        `${EVENTS_PREFIX}/`,
        ...derivedRelations.map((r) => `${r.folder}/`),
      ],
      remove: [INCOMING_PREFIX],
    });

    // No reserved concurrency (AWS keeps 100 of an account's concurrency unreserved, so a new account with a
    // small quota refuses any reservation and the stack rolls back): runs are kept apart by a lease in DynamoDB.
    this.upkeep = writer('Upkeep', 'store-upkeep', { timeout: UPKEEP_TIMEOUT, memorySize: 4096 });
    const stored = [`${EVENTS_PREFIX}/`, ...derivedRelations.map((r) => `${r.folder}/`)];
    // Reads every relation: the events it compacts, and the session fragments written since its last run to mark
    // sessions whole; keeps each domain's fragment index under upkeep/ (ingest/fragment-index.ts).
    grantObjects(this.upkeep.role!, bucket.bucketArn, {
      read: [...stored, UPKEEP_PREFIX],
      write: [...stored, UPKEEP_PREFIX],
      remove: stored,
    });
    new Rule(this, 'UpkeepSchedule', {
      description: 'Compacts crowded partitions of the events bucket; deletes the files compactions replaced',
      schedule: Schedule.rate(Duration.hours(1)),
      targets: [new LambdaFunction(this.upkeep, { retryAttempts: 0 })],
    });
  }

  /** Sends `alarm`'s notifications to the alarm topic: its action, and the topic policy that lets it publish. */
  notifyOn(alarm: Alarm): void {
    alarm.addAlarmAction(new SnsAction(this.alarmTopic));
    this.alarmTopic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.alarmTopic.topicArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': alarm.alarmArn },
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
        },
      }),
    );
  }
}

/**
 * Object permissions by key prefix, and listing the bucket (a missing key then answers 404, not 403). Keys below a
 * prefix are per object, so only a wildcard can name them: acknowledged per prefix.
 */
function grantObjects(
  role: IRole,
  bucketArn: string,
  prefixes: { read: string[]; write: string[]; remove: string[] },
): void {
  const objects = (list: string[]) => list.map((p) => `${bucketArn}/${p}*`);
  const stack = Stack.of(role);
  const bucketId = stack.resolve(bucketArn) as { 'Fn::GetAtt'?: [string, string] };
  for (const prefix of new Set([...prefixes.read, ...prefixes.write, ...prefixes.remove])) {
    Validations.of(role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId['Fn::GetAtt']?.[0]}.Arn>/${prefix}*]`,
      reason:
        'The store writers read, write and delete objects under fixed prefixes of the events bucket; object keys are per import, partition and file, so only a prefix can name them.',
    });
  }
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: objects(prefixes.read) }));
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['s3:PutObject'], resources: objects(prefixes.write) }));
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['s3:DeleteObject'], resources: objects(prefixes.remove) }));
  role.addToPrincipalPolicy(new PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucketArn] }));
}
