import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiGatewayV2Client, GetApisCommand, GetRoutesCommand } from '@aws-sdk/client-apigatewayv2';
import { DescribeDeliveryStreamCommand, FirehoseClient } from '@aws-sdk/client-firehose';
import {
  CloudFormationClient,
  DescribeStacksCommand,
  paginateListStackResources,
  type StackResourceSummary,
} from '@aws-sdk/client-cloudformation';
import { CloudWatchClient, DescribeAlarmsCommand } from '@aws-sdk/client-cloudwatch';
import { DescribeTableCommand, DescribeTimeToLiveCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeRuleCommand, EventBridgeClient, ListTargetsByRuleCommand } from '@aws-sdk/client-eventbridge';
import { GetTableCommand, GlueClient } from '@aws-sdk/client-glue';
import { GetFunctionCommand, LambdaClient, ListEventSourceMappingsCommand } from '@aws-sdk/client-lambda';
import {
  GetBucketNotificationConfigurationCommand,
  GetBucketPolicyCommand,
  GetObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { GetTopicAttributesCommand, SNSClient } from '@aws-sdk/client-sns';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';

// A deploy rehearsal: the stack deployed into moto's CloudFormation as a user deploys it, with the CDK CLI the
// README names (`cdk bootstrap`, then `cdk deploy`: bundling, asset publishing to the bootstrap bucket, a change
// set), then each resource read back from its service and compared with what the template gives it. moto is started
// by test/support/moto-lambda-python.py: the one custom resource (S3 bucket notifications, a Python function CDK
// ships) runs as Lambda would call it, without Docker, and the types moto's CloudFormation does not model (Glue,
// the Athena workgroup, alarms, resource policies, the HTTP API) are created through moto's services by handlers
// there, so that each is created from the template's properties as CloudFormation resolves them.

const ACCOUNT = '123456789012';
/** Not a resource: CloudFormation records it and creates nothing. */
const NOT_MODELLED = new Set(['AWS::CDK::Metadata']);
const run = promisify(execFile);

type Json = Record<string, any>;
interface Template {
  Resources: Record<string, { Type: string; Properties?: Json }>;
}

let moto: MotoServer;
let template: Template;
let physical: Map<string, StackResourceSummary>;
const out = mkdtempSync(join(tmpdir(), 'rehearsal-'));
const clientOptions = () => ({ endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials });

/** The resources of `type` in the template, with their physical ids in the deployed stack. */
const resourcesOf = (type: string) =>
  Object.entries(template.Resources)
    .filter(([, r]) => r.Type === type)
    .map(([id, r]) => ({ id, properties: r.Properties ?? {}, physicalId: physical.get(id)!.PhysicalResourceId! }));
/** A property's value in the deployed stack: a literal as it is, a `Ref` or `Fn::GetAtt` as the resource's physical id. */
const physicalIdOf = (value: Json | string): string =>
  typeof value === 'string' ? value : physical.get(value.Ref ?? value['Fn::GetAtt']?.[0])!.PhysicalResourceId!;

/**
 * A template value as the deployed stack has it: `Ref` as the physical id, `Fn::GetAtt` of an `Arn` as the ARN the
 * service gives it, `Fn::Join` and the pseudo parameters; anything else as it is.
 */
function resolved(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(resolved);
  if (value === null || typeof value !== 'object') return value;
  const v = value as Json;
  if (v.Ref === 'AWS::AccountId') return ACCOUNT;
  if (v.Ref === 'AWS::Region') return moto.region;
  if (v.Ref === 'AWS::Partition') return 'aws';
  if (v.Ref === 'AWS::URLSuffix') return 'amazonaws.com';
  if (typeof v.Ref === 'string') return physicalIdOf(v);
  if (v['Fn::Join']) return (resolved(v['Fn::Join'][1]) as string[]).join(v['Fn::Join'][0]);
  if (v['Fn::GetAtt']?.[1] === 'Arn') {
    const [id] = v['Fn::GetAtt'] as [string];
    const name = physicalIdOf(v);
    switch (template.Resources[id]!.Type) {
      case 'AWS::S3::Bucket':
        return `arn:aws:s3:::${name}`;
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${moto.region}:${ACCOUNT}:${name.split('/').pop()}`;
      case 'AWS::KMS::Key':
        return `arn:aws:kms:${moto.region}:${ACCOUNT}:key/${name}`;
      default:
        return value;
    }
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolved(x)]));
}

beforeAll(async () => {
  moto = await startMoto({ launcher: new URL('../support/moto-lambda-python.py', import.meta.url).pathname });
  // The CLI as a user runs it, reaching moto by AWS_ENDPOINT_URL. moto reads a template URL on "localhost" as its own.
  const env = {
    ...process.env,
    AWS_ENDPOINT_URL: moto.endpoint.replace('127.0.0.1', 'localhost'),
    AWS_ACCESS_KEY_ID: moto.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: moto.credentials.secretAccessKey,
    AWS_REGION: moto.region,
    AWS_DEFAULT_REGION: moto.region,
    CDK_DISABLE_VERSION_CHECK: '1',
  };
  const cdk = (args: string[]) =>
    run('node_modules/.bin/cdk', args, { env, maxBuffer: 64 * 1024 * 1024, timeout: 600_000 }).catch(
      (error: { stderr?: string; message: string }) => {
        throw new Error(
          `cdk ${args[0]} failed:\n${(error.stderr ?? error.message).slice(-3000)}\nmoto:\n${moto.log().slice(-3000)}`,
        );
      },
    );
  await cdk(['bootstrap', `aws://${ACCOUNT}/${moto.region}`]);
  await cdk(['deploy', '--require-approval', 'never', '--output', out]);
  template = JSON.parse(readFileSync(join(out, 'AnalyticsQueryApi.template.json'), 'utf8')) as Template;
  const cloudFormation = new CloudFormationClient(clientOptions());
  physical = new Map();
  for await (const page of paginateListStackResources({ client: cloudFormation }, { StackName: 'AnalyticsQueryApi' })) {
    for (const r of page.StackResourceSummaries ?? []) physical.set(r.LogicalResourceId!, r);
  }
}, 900_000);

afterAll(async () => {
  await moto?.stop();
});

describe('deploy rehearsal: `cdk bootstrap` and `cdk deploy` into moto', () => {
  it('creates every resource of the template', async () => {
    const { Stacks } = await new CloudFormationClient(clientOptions()).send(
      new DescribeStacksCommand({ StackName: 'AnalyticsQueryApi' }),
    );
    expect(Stacks?.[0]?.StackStatus).toBe('CREATE_COMPLETE');
    const missing = Object.entries(template.Resources)
      .filter(([id, r]) => !NOT_MODELLED.has(r.Type) && physical.get(id)?.ResourceStatus !== 'CREATE_COMPLETE')
      .map(([id, r]) => `${id} (${r.Type}): ${physical.get(id)?.ResourceStatus ?? 'not created'}`);
    expect(missing, moto.log().slice(-4000)).toEqual([]);
  });

  it("tables with the template's keys, billing and time to live", async () => {
    const dynamo = new DynamoDBClient(clientOptions());
    const tables = resourcesOf('AWS::DynamoDB::Table');
    expect(tables).toHaveLength(3);
    for (const { properties, physicalId } of tables) {
      const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: physicalId }));
      expect(Table?.KeySchema, physicalId).toEqual(properties.KeySchema);
      expect(new Set(Table?.AttributeDefinitions?.map((a) => `${a.AttributeName}:${a.AttributeType}`))).toEqual(
        new Set((properties.AttributeDefinitions as Json[]).map((a) => `${a.AttributeName}:${a.AttributeType}`)),
      );
      expect(Table?.BillingModeSummary?.BillingMode ?? 'PROVISIONED').toBe(properties.BillingMode ?? 'PROVISIONED');
      const ttl = (await dynamo.send(new DescribeTimeToLiveCommand({ TableName: physicalId }))).TimeToLiveDescription;
      if (properties.TimeToLiveSpecification?.Enabled)
        expect(ttl?.AttributeName, physicalId).toBe(properties.TimeToLiveSpecification.AttributeName);
      else expect(ttl?.TimeToLiveStatus ?? 'DISABLED').toBe('DISABLED');
    }
  });

  it('queues with their dead-letter redrive, encryption and policies; bucket policies; the bucket notifies the incoming queue', async () => {
    const sqs = new SQSClient(clientOptions());
    // A policy statement as compared: its effect, actions, principal, resources and conditions, resolved.
    const shape = (s: Json) =>
      JSON.stringify(
        resolved({ ...s, Action: [s.Action].flat().sort(), Resource: [s.Resource].flat().sort(), Sid: undefined }),
      );
    const queues = resourcesOf('AWS::SQS::Queue');
    const arnOf = new Map<string, string>();
    for (const { id, properties, physicalId } of queues) {
      const { Attributes = {} } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: physicalId, AttributeNames: ['All'] }),
      );
      arnOf.set(id, Attributes.QueueArn!);
      expect(Attributes.VisibilityTimeout, id).toBe(String(properties.VisibilityTimeout ?? 30));
      if (properties.RedrivePolicy)
        expect(JSON.parse(Attributes.RedrivePolicy!).maxReceiveCount, id).toBe(
          properties.RedrivePolicy.maxReceiveCount,
        );
      if (properties.KmsMasterKeyId) expect(Attributes.KmsMasterKeyId, id).toBeDefined();
      else expect(Attributes.SqsManagedSseEnabled, id).toBe(String(properties.SqsManagedSseEnabled ?? false));
    }
    for (const { properties } of resourcesOf('AWS::SQS::QueuePolicy')) {
      for (const queue of properties.Queues as Json[]) {
        const { Attributes = {} } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: physicalIdOf(queue), AttributeNames: ['Policy'] }),
        );
        const statements = (JSON.parse(Attributes.Policy!) as Json).Statement as Json[];
        expect(statements.map(shape).sort()).toEqual((properties.PolicyDocument.Statement as Json[]).map(shape).sort());
      }
    }
    const s3 = new S3Client({ ...clientOptions(), forcePathStyle: true });
    for (const { properties } of resourcesOf('AWS::S3::BucketPolicy')) {
      const { Policy } = await s3.send(new GetBucketPolicyCommand({ Bucket: physicalIdOf(properties.Bucket) }));
      expect(((JSON.parse(Policy!) as Json).Statement as Json[]).map(shape).sort()).toEqual(
        (properties.PolicyDocument.Statement as Json[]).map(shape).sort(),
      );
    }
    const [notifications] = resourcesOf('Custom::S3BucketNotifications');
    const bucket = physicalIdOf(notifications!.properties.BucketName);
    const configured = await s3.send(new GetBucketNotificationConfigurationCommand({ Bucket: bucket }));
    const wanted = notifications!.properties.NotificationConfiguration.QueueConfigurations as Json[];
    expect(
      configured.QueueConfigurations?.map((q) => ({
        events: q.Events,
        filter: q.Filter?.Key?.FilterRules,
        queue: q.QueueArn,
      })),
    ).toEqual(
      wanted.map((q) => ({
        events: q.Events,
        filter: q.Filter.Key.FilterRules,
        queue: arnOf.get(q.QueueArn['Fn::GetAtt'][0]),
      })),
    );
  });

  it("functions run the published assets, with the template's runtime, handler, sizes and environment", async () => {
    const lambda = new LambdaClient(clientOptions());
    const s3 = new S3Client({ ...clientOptions(), forcePathStyle: true });
    const functions = resourcesOf('AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThanOrEqual(14);
    for (const { id, properties, physicalId } of functions) {
      const { Configuration: c } = await lambda.send(new GetFunctionCommand({ FunctionName: physicalId }));
      expect(
        {
          runtime: c?.Runtime,
          handler: c?.Handler,
          memory: c?.MemorySize,
          timeout: c?.Timeout,
          architectures: c?.Architectures,
        },
        id,
      ).toEqual({
        runtime: properties.Runtime,
        handler: properties.Handler,
        memory: properties.MemorySize ?? 128,
        timeout: properties.Timeout ?? 3,
        architectures: properties.Architectures ?? ['x86_64'],
      });
      expect(Object.keys(c?.Environment?.Variables ?? {}).sort(), id).toEqual(
        Object.keys(properties.Environment?.Variables ?? {}).sort(),
      );
      if (properties.Code.S3Key) {
        // The code is the zip `cdk deploy` published to the bootstrap bucket, byte for byte.
        const published = await s3.send(
          new GetObjectCommand({
            Bucket: `cdk-hnb659fds-assets-${ACCOUNT}-${moto.region}`,
            Key: properties.Code.S3Key,
          }),
        );
        const bytes = await published.Body!.transformToByteArray();
        expect(c?.CodeSha256, id).toBe(createHash('sha256').update(bytes).digest('base64'));
      }
    }
    const [mapping] = resourcesOf('AWS::Lambda::EventSourceMapping');
    const { EventSourceMappings } = await lambda.send(
      new ListEventSourceMappingsCommand({ FunctionName: physicalIdOf(mapping!.properties.FunctionName) }),
    );
    expect(
      EventSourceMappings?.map((m) => ({
        batch: m.BatchSize,
        concurrency: m.ScalingConfig?.MaximumConcurrency,
        types: m.FunctionResponseTypes,
      })),
    ).toEqual([
      {
        batch: mapping!.properties.BatchSize,
        concurrency: mapping!.properties.ScalingConfig?.MaximumConcurrency,
        types: mapping!.properties.FunctionResponseTypes,
      },
    ]);
  });

  it("Glue tables with the template's columns, partition keys and projection", async () => {
    const glue = new GlueClient(clientOptions());
    const tables = resourcesOf('AWS::Glue::Table');
    expect(tables.length).toBeGreaterThanOrEqual(6);
    for (const { id, properties } of tables) {
      const input = properties.TableInput as Json;
      const { Table } = await glue.send(
        new GetTableCommand({ DatabaseName: physicalIdOf(properties.DatabaseName), Name: input.Name }),
      );
      expect(
        Table?.StorageDescriptor?.Columns?.map((c) => `${c.Name} ${c.Type}`),
        id,
      ).toEqual((input.StorageDescriptor.Columns as Json[]).map((c) => `${c.Name} ${c.Type}`));
      expect(
        Table?.PartitionKeys?.map((c) => `${c.Name} ${c.Type}`),
        id,
      ).toEqual((input.PartitionKeys as Json[]).map((c) => `${c.Name} ${c.Type}`));
      const literal = Object.entries(input.Parameters as Json).filter(([, v]) => typeof v === 'string');
      expect(
        Object.entries(Table?.Parameters ?? {})
          .filter(([k]) => literal.some(([l]) => l === k))
          .sort(),
        id,
      ).toEqual(literal.sort());
      expect(Object.keys(Table?.Parameters ?? {}).sort(), id).toEqual(Object.keys(input.Parameters as Json).sort());
    }
  });

  it("the collector's delivery stream writes gzip NDJSON under incoming/collected/ with the template's role and buffering", async () => {
    const [stream] = resourcesOf('AWS::KinesisFirehose::DeliveryStream');
    const { DeliveryStreamDescription: described } = await new FirehoseClient(clientOptions()).send(
      new DescribeDeliveryStreamCommand({ DeliveryStreamName: stream!.physicalId }),
    );
    const wanted = stream!.properties.ExtendedS3DestinationConfiguration;
    const destination = described!.Destinations![0]!.ExtendedS3DestinationDescription!;
    expect({
      bucket: destination.BucketARN,
      role: destination.RoleARN,
      prefix: destination.Prefix,
      errors: destination.ErrorOutputPrefix,
      buffering: destination.BufferingHints,
      compression: destination.CompressionFormat,
    }).toEqual({
      bucket: `arn:aws:s3:::${physicalIdOf(wanted.BucketARN)}`,
      role: expect.stringContaining(physicalIdOf(wanted.RoleARN)),
      prefix: 'incoming/collected/!{timestamp:yyyy/MM/dd/HH}/',
      errors: wanted.ErrorOutputPrefix,
      buffering: { IntervalInSeconds: 60, SizeInMBs: 5 },
      compression: 'GZIP',
    });
  });

  it('the upkeep schedule, the alarms on their topic and its key, and every route of the HTTP API', async () => {
    const events = new EventBridgeClient(clientOptions());
    const [rule] = resourcesOf('AWS::Events::Rule');
    const described = await events.send(new DescribeRuleCommand({ Name: rule!.physicalId }));
    expect(described.ScheduleExpression).toBe(rule!.properties.ScheduleExpression);
    const { Targets } = await events.send(new ListTargetsByRuleCommand({ Rule: rule!.physicalId }));
    expect(Targets).toHaveLength(1);
    expect(Targets![0]!.Arn).toContain(physicalIdOf(rule!.properties.Targets[0].Arn));

    const [topic] = resourcesOf('AWS::SNS::Topic');
    const { Attributes = {} } = await new SNSClient(clientOptions()).send(
      new GetTopicAttributesCommand({ TopicArn: topic!.physicalId }),
    );
    expect(Attributes.KmsMasterKeyId).toContain(physicalIdOf(topic!.properties.KmsMasterKeyId));
    const alarms = resourcesOf('AWS::CloudWatch::Alarm');
    const { MetricAlarms = [] } = await new CloudWatchClient(clientOptions()).send(
      new DescribeAlarmsCommand({ AlarmNames: alarms.map((a) => a.physicalId) }),
    );
    expect(MetricAlarms).toHaveLength(alarms.length);
    for (const alarm of MetricAlarms) {
      const wanted = alarms.find((a) => a.physicalId === alarm.AlarmName)!.properties;
      expect({ metric: alarm.MetricName, threshold: alarm.Threshold, actions: alarm.AlarmActions }).toEqual({
        metric: wanted.MetricName ?? alarm.MetricName,
        threshold: wanted.Threshold,
        actions: [topic!.physicalId],
      });
    }

    const gateway = new ApiGatewayV2Client(clientOptions());
    const { Items: apis = [] } = await gateway.send(new GetApisCommand({}));
    expect(apis.map((a) => a.ProtocolType)).toEqual(['HTTP']);
    const { Items: routes = [] } = await gateway.send(new GetRoutesCommand({ ApiId: apis[0]!.ApiId! }));
    expect(routes.map((r) => r.RouteKey).sort()).toEqual(
      resourcesOf('AWS::ApiGatewayV2::Route')
        .map((r) => r.properties.RouteKey as string)
        .sort(),
    );
  });
});
