import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { CfnWorkGroup } from 'aws-cdk-lib/aws-athena';
import { CfnDatabase, CfnTable } from 'aws-cdk-lib/aws-glue';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership, type BucketProps } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { derivedRelations } from '../shared/events/derived-relations.js';
import { EVENT_DAYS } from '../shared/events/event-validation.js';
import { eventColumns, partitionColumns, type ColumnType } from '../shared/events/event-columns.js';
import type { StackSettings } from './settings.js';

// Where events live on AWS and how Athena reads them: the events bucket in the layout of docs/EVENT-FORMAT.md,
// a Glue table over it with partition projection (Athena never lists partitions, and each query must name one
// domain), and a workgroup that fixes the engine, the result location and the per-query scan cutoff.

/** Prefix of the event files in the bucket; `domain=<d>/dt=<YYYY-MM-DD>/*.parquet` below it. */
export const EVENTS_PREFIX = 'events';
const RESULTS_PREFIX = 'results';
export const EVENTS_TABLE = 'events';
/**
 * The derived relations (session fragments, pageview buckets: docs/STORAGE.md) beside the events, each under its
 * folder as prefix, `domain=<d>/dt=<YYYY-MM-DD>/*.parquet` below it, each with its own Glue table.
 */

/** Spelled out so a new ColumnType fails to compile here until its Glue type is chosen. */
const glueTypes: Record<ColumnType | 'date', string> = {
  timestamp: 'timestamp',
  string: 'string',
  double: 'double',
  bigint: 'bigint',
  boolean: 'boolean',
  string_list: 'array<string>',
  date: 'date',
};

const secureBucket: Partial<BucketProps> = {
  encryption: BucketEncryption.S3_MANAGED,
  blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
  objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
  enforceSSL: true,
  // Deleting a stack must not delete data; a non-empty bucket could not be deleted anyway.
  removalPolicy: RemovalPolicy.RETAIN,
};

export class EventLake extends Construct {
  readonly eventsBucket: Bucket;
  readonly resultsBucket: Bucket;
  readonly databaseName: string;
  readonly tableName = EVENTS_TABLE;
  readonly workGroupName: string;

  constructor(scope: Construct, id: string, settings: StackSettings) {
    super(scope, id);
    const stack = Stack.of(this);

    // Server access logs of the two buckets below (cdk-nag S1); being their destination, it logs nowhere itself.
    const accessLogs = new Bucket(this, 'AccessLogs', {
      ...secureBucket,
      lifecycleRules: [{ expiration: Duration.days(365) }],
    });

    this.eventsBucket = new Bucket(this, 'EventsBucket', {
      ...secureBucket,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'events-bucket/',
    });

    this.resultsBucket = new Bucket(this, 'AthenaResults', {
      ...secureBucket,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'athena-results/',
      lifecycleRules: [
        {
          expiration: Duration.days(settings.athenaResultsRetentionDays),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
    });

    // Glue names are account-wide; deriving them from the stack name lets two stacks share an account.
    // `AnalyticsQueryApi` → `analytics_query_api` ([a-z0-9_]+, as athenaDialect requires).
    this.databaseName = stack.stackName
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .toLowerCase();
    this.workGroupName = stack.stackName;

    const database = new CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: { name: this.databaseName, description: 'Tracked events of the analytics query API' },
    });
    database.applyRemovalPolicy(RemovalPolicy.DESTROY);

    // Two tables in the same layout and with the same projection: the events, and their session fragments.
    const projectedTable = (
      id: string,
      name: string,
      prefix: string,
      columns: readonly (readonly [string, ColumnType])[],
    ) => {
      const root = `s3://${this.eventsBucket.bucketName}/${prefix}`;
      const table = new CfnTable(this, id, {
        catalogId: stack.account,
        databaseName: this.databaseName,
        tableInput: {
          name,
          tableType: 'EXTERNAL_TABLE',
          parameters: {
            EXTERNAL: 'TRUE',
            classification: 'parquet',
            'projection.enabled': 'true',
            // Any domain: the value comes from the query's `domain = ...` condition, never from a listing.
            'projection.domain.type': 'injected',
            'projection.dt.type': 'date',
            'projection.dt.format': 'yyyy-MM-dd',
            // Every day the importer accepts, no more and no less: an event that was imported can be read. Queries
            // always bound `dt` (all-time reads by the domain's days), so the span costs no partition listing.
            'projection.dt.range': `${EVENT_DAYS.first},${EVENT_DAYS.last}`,
            'projection.dt.interval': '1',
            'projection.dt.interval.unit': 'DAYS',
            'storage.location.template': `${root}/domain=\${domain}/dt=\${dt}/`,
          },
          partitionKeys: partitionColumns.map(([column, type]) => ({ name: column, type: glueTypes[type] })),
          storageDescriptor: {
            location: `${root}/`,
            inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
            outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
            serdeInfo: { serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
            columns: columns.map(([column, type]) => ({ name: column, type: glueTypes[type] })),
          },
        },
      });
      table.addResourceDependency(database);
      table.applyRemovalPolicy(RemovalPolicy.DESTROY);
    };
    projectedTable('EventsTable', EVENTS_TABLE, EVENTS_PREFIX, eventColumns);
    // Logical ids of the first derived table kept from before the list existed, so a deployed table is updated, not replaced.
    const logicalIds: Record<string, string> = {
      session_fragments: 'SessionsTable',
      pageview_buckets: 'PageviewBucketsTable',
      page_buckets: 'PageBucketsTable',
      visitor_days: 'VisitorDaysTable',
      custom_event_buckets: 'CustomEventBucketsTable',
    };
    for (const r of derivedRelations) projectedTable(logicalIds[r.table]!, r.table, r.folder, r.columns);

    const workGroup = new CfnWorkGroup(this, 'WorkGroup', {
      name: this.workGroupName,
      description: 'Queries of the analytics query API',
      // Lets `cdk destroy` remove a workgroup that has query history.
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        // Queries cannot override the result location, encryption or cutoff below.
        enforceWorkGroupConfiguration: true,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        bytesScannedCutoffPerQuery: settings.bytesScannedCutoffPerQuery,
        publishCloudWatchMetricsEnabled: true,
        resultConfiguration: {
          outputLocation: `s3://${this.resultsBucket.bucketName}/${RESULTS_PREFIX}/`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });
    workGroup.applyRemovalPolicy(RemovalPolicy.DESTROY);
  }

  /** An alarm when the workgroup's queries together scan more than `bytes` in an hour (CloudWatch's ProcessedBytes). */
  scanAlarm(bytes: number): Alarm {
    return new Alarm(this, 'HourlyScanAlarm', {
      alarmDescription: `The API's Athena queries scanned more than ${bytes} bytes in an hour (docs/DEPLOY.md, "Sizing the scan limits").`,
      metric: new Metric({
        namespace: 'AWS/Athena',
        metricName: 'ProcessedBytes',
        dimensionsMap: { WorkGroup: this.workGroupName },
        statistic: 'Sum',
        period: Duration.hours(1),
      }),
      threshold: bytes,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
  }

  /** Run queries in the workgroup: Athena calls, read the Glue table and the event files, write results. */
  grantQuery(grantee: IGrantable): void {
    const stack = Stack.of(this);
    const principal = grantee.grantPrincipal;
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [
          'athena:StartQueryExecution',
          'athena:GetQueryExecution',
          'athena:GetQueryResults',
          'athena:StopQueryExecution',
        ],
        resources: [stack.formatArn({ service: 'athena', resource: 'workgroup', resourceName: this.workGroupName })],
      }),
    );
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetPartition', 'glue:GetPartitions'],
        resources: [
          stack.formatArn({ service: 'glue', resource: 'catalog' }),
          stack.formatArn({ service: 'glue', resource: 'database', resourceName: this.databaseName }),
          stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${this.databaseName}/${EVENTS_TABLE}` }),
          ...derivedRelations.map((r) =>
            stack.formatArn({ service: 'glue', resource: 'table', resourceName: `${this.databaseName}/${r.table}` }),
          ),
        ],
      }),
    );
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [EVENTS_PREFIX, ...derivedRelations.map((r) => r.folder)].map((prefix) =>
          this.eventsBucket.arnForObjects(`${prefix}/*`),
        ),
      }),
    );
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket', 's3:GetBucketLocation'],
        resources: [this.eventsBucket.bucketArn],
      }),
    );
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [this.resultsBucket.arnForObjects(`${RESULTS_PREFIX}/*`)],
      }),
    );
    principal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:ListBucket', 's3:GetBucketLocation', 's3:ListBucketMultipartUploads'],
        resources: [this.resultsBucket.bucketArn],
      }),
    );
  }

  /** The object wildcards grantQuery writes, as cdk-nag names its IAM5 findings, for targeted acknowledgements. */
  objectWildcardFindings(): string[] {
    const stack = Stack.of(this);
    const arnOf = (bucket: Bucket) => `<${stack.getLogicalId(bucket.node.defaultChild as never)}.Arn>`;
    return [
      ...[EVENTS_PREFIX, ...derivedRelations.map((r) => r.folder)].map(
        (prefix) => `${arnOf(this.eventsBucket)}/${prefix}/*`,
      ),
      `${arnOf(this.resultsBucket)}/${RESULTS_PREFIX}/*`,
    ].map((resource) => `AwsSolutions-IAM5[Resource::${resource}]`);
  }
}
