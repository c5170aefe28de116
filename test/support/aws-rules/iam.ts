import { runSimulation } from '@cloud-copilot/iam-simulate';
import { tableNames } from '../../../shared/config.js';
import { ACCOUNT, EVENTS_BUCKET, REGION, RESULTS_BUCKET, type Json, type ResolvedStack } from './template.js';

// Each SDK call a deployed function makes, as the IAM requests AWS authorizes for it, evaluated against that
// function's role policies (and the bucket's resource policy) from the synthesized template by an IAM policy
// evaluator (@cloud-copilot/iam-simulate). Bucket and table names of the test's stand-ins are mapped to the
// template's resources: a bucket is the Athena results bucket when it is named so, else the events bucket; tables
// by the names the code is configured with.

export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string | string[]>;
}

/** The resource ARN of `bucket` (or of an object key in it) as the template names it. */
function s3Arn(bucket: string | undefined, key?: string): string {
  const name =
    bucket === process.env.ATHENA_RESULTS_BUCKET || /athena-results/.test(bucket ?? '')
      ? RESULTS_BUCKET
      : EVENTS_BUCKET;
  return key === undefined ? `arn:aws:s3:::${name}` : `arn:aws:s3:::${name}/${key}`;
}

function tableArn(stack: ResolvedStack, table: string, index?: string): string {
  const names = tableNames();
  const which = (Object.keys(names) as (keyof typeof names)[]).find((k) => names[k] === table);
  if (!which)
    throw new Error(`IAM check: the table ${table} is none of the stack's (${Object.values(names).join(', ')})`);
  return `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${stack.tables[which]}${index ? `/index/${index}` : ''}`;
}

/**
 * The IAM requests of one SDK call. An unknown command fails: each new call the functions make must say what it
 * needs here. Athena queries also act with the caller's permissions on Glue and S3 (reading the tables named in
 * the statement, writing the result); those are included.
 */
export function iamRequestsOf(stack: ResolvedStack, service: string, command: string, input: Json): IamRequest[] {
  const secure = { 'aws:SecureTransport': 'true' };
  if (service === 's3') {
    const object = (action: string, key = input.Key) => ({
      action,
      resource: s3Arn(input.Bucket, key),
      context: secure,
    });
    switch (command) {
      case 'GetObjectCommand':
      case 'HeadObjectCommand':
        return [object('s3:GetObject')];
      case 'PutObjectCommand':
      case 'CreateMultipartUploadCommand':
      case 'UploadPartCommand':
      case 'CompleteMultipartUploadCommand':
        return [object('s3:PutObject')];
      case 'AbortMultipartUploadCommand':
        return [object('s3:AbortMultipartUpload')];
      case 'UploadPartCopyCommand':
      case 'CopyObjectCommand': {
        const source = decodeURIComponent(String(input.CopySource)).replace(/^\//, '');
        const [bucket, ...key] = source.split('/');
        return [
          { action: 's3:GetObject', resource: s3Arn(bucket, key.join('/')), context: secure },
          object('s3:PutObject'),
        ];
      }
      case 'DeleteObjectCommand':
        return [object('s3:DeleteObject')];
      case 'DeleteObjectsCommand':
        return (input.Delete?.Objects ?? []).map((o: { Key: string }) => object('s3:DeleteObject', o.Key));
      case 'ListObjectsV2Command':
      case 'ListObjectsCommand':
        return [
          {
            action: 's3:ListBucket',
            resource: s3Arn(input.Bucket),
            context: { ...secure, ...(input.Prefix ? { 's3:prefix': input.Prefix } : {}) },
          },
        ];
      case 'HeadBucketCommand':
        return [{ action: 's3:ListBucket', resource: s3Arn(input.Bucket), context: secure }];
    }
  }
  if (service === 'dynamodb') {
    const on = (action: string, table: string, index?: string) => ({
      action: `dynamodb:${action}`,
      resource: tableArn(stack, table, index),
    });
    switch (command) {
      case 'GetItemCommand':
      case 'PutItemCommand':
      case 'UpdateItemCommand':
      case 'DeleteItemCommand':
      case 'ScanCommand':
        return [on(command.replace(/Command$/, ''), input.TableName)];
      case 'QueryCommand':
        return [on('Query', input.TableName, input.IndexName)];
      case 'TransactWriteItemsCommand':
        // "TransactWriteItems requires permissions for each of its actions": PutItem, UpdateItem, DeleteItem, ConditionCheckItem.
        return (input.TransactItems ?? []).map((item: Json) => {
          const [kind, body] = Object.entries(item)[0] as [string, Json];
          const action = {
            Put: 'PutItem',
            Update: 'UpdateItem',
            Delete: 'DeleteItem',
            ConditionCheck: 'ConditionCheckItem',
          }[kind]!;
          return on(action, body.TableName);
        });
      case 'TransactGetItemsCommand':
        return (input.TransactItems ?? []).map((item: Json) => on('GetItem', item.Get.TableName));
      case 'BatchWriteItemCommand':
        return Object.keys(input.RequestItems ?? {}).map((table) => on('BatchWriteItem', table));
      case 'BatchGetItemCommand':
        return Object.keys(input.RequestItems ?? {}).map((table) => on('BatchGetItem', table));
    }
  }
  if (service === 'athena') {
    const workGroup = `arn:aws:athena:${REGION}:${ACCOUNT}:workgroup/${stack.workGroup}`;
    switch (command) {
      case 'GetQueryExecutionCommand':
      case 'GetQueryResultsCommand':
      case 'StopQueryExecutionCommand':
        return [{ action: `athena:${command.replace(/Command$/, '')}`, resource: workGroup }];
      case 'StartQueryExecutionCommand': {
        const glue = (kind: string, name: string) => `arn:aws:glue:${REGION}:${ACCOUNT}:${kind}/${name}`;
        const tables = glueTablesIn(stack, String(input.QueryString ?? ''));
        return [
          { action: 'athena:StartQueryExecution', resource: workGroup },
          { action: 'glue:GetDatabase', resource: glue('database', stack.database) },
          ...tables.flatMap(({ name, folder }) => [
            { action: 'glue:GetTable', resource: glue('table', `${stack.database}/${name}`) },
            {
              action: 's3:ListBucket',
              resource: `arn:aws:s3:::${EVENTS_BUCKET}`,
              context: { ...secure, 's3:prefix': `${folder}/` },
            },
            {
              action: 's3:GetObject',
              resource: `arn:aws:s3:::${EVENTS_BUCKET}/${folder}/domain=d/dt=2026-01-01/f.parquet`,
              context: secure,
            },
          ]),
          { action: 's3:PutObject', resource: `arn:aws:s3:::${RESULTS_BUCKET}/results/q.csv`, context: secure },
          { action: 's3:GetObject', resource: `arn:aws:s3:::${RESULTS_BUCKET}/results/q.csv`, context: secure },
        ];
      }
    }
  }
  if (service === 'firehose' && (command === 'PutRecordBatchCommand' || command === 'PutRecordCommand')) {
    // Any stream a test names stands for the stack's one delivery stream, as any bucket stands for its bucket.
    const [id] = Object.entries(stack.resources).find(([, r]) => r.Type === 'AWS::KinesisFirehose::DeliveryStream')!;
    return [
      {
        action: `firehose:${command.replace(/Command$/, '')}`,
        resource: `arn:aws:firehose:${REGION}:${ACCOUNT}:deliverystream/${id}`,
      },
    ];
  }
  throw new Error(
    `IAM check: ${service} ${command} has no IAM mapping in test/support/aws-rules/iam.ts; add what AWS authorizes for it`,
  );
}

/** The Glue tables a statement reads, with their S3 folders (from the template's tables). */
function glueTablesIn(stack: ResolvedStack, sql: string): { name: string; folder: string }[] {
  return Object.values(stack.resources)
    .filter((r) => r.Type === 'AWS::Glue::Table')
    .map((r) => ({
      name: r.Properties.TableInput.Name as string,
      folder: String(r.Properties.TableInput.StorageDescriptor.Location)
        .replace(/^s3:\/\/[^/]+\//, '')
        .replace(/\/$/, ''),
    }))
    .filter(({ name }) => new RegExp(`(^|[^A-Za-z0-9_])"?${name}"?([^A-Za-z0-9_]|$)`).test(sql));
}

/** The role's identity policies: its own inline ones and every AWS::IAM::Policy attached to it. */
export function identityPolicies(stack: ResolvedStack, roleId: string): { name: string; policy: Json }[] {
  const role = stack.resources[roleId];
  if (!role) throw new Error(`No role ${roleId} in the template`);
  if ((role.Properties.ManagedPolicyArns ?? []).length)
    throw new Error(`IAM check: role ${roleId} has managed policies, which this check does not load`);
  const inline = (role.Properties.Policies ?? []).map((p: Json) => ({ name: p.PolicyName, policy: p.PolicyDocument }));
  const attached = Object.entries(stack.resources)
    .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles ?? []).includes(roleId))
    .map(([id, r]) => ({ name: id, policy: r.Properties.PolicyDocument }));
  return [...inline, ...attached];
}

/** A bucket's resource policy from the template, by the name the resolved template gives the bucket. */
function bucketPolicy(stack: ResolvedStack, resource: string): Json | undefined {
  const bucket = /^arn:aws:s3:::([^/]+)/.exec(resource)?.[1];
  return Object.values(stack.resources).find(
    (r) => r.Type === 'AWS::S3::BucketPolicy' && r.Properties.Bucket === bucket,
  )?.Properties.PolicyDocument;
}

/** Requests already allowed in this worker (the template does not change during a run). */
const allowed = new Set<string>();

/** Throws unless every request is allowed for the function's role: the text names the call and what was denied. */
export async function authorize(
  stack: ResolvedStack,
  functionName: string,
  requests: IamRequest[],
  call: string,
): Promise<void> {
  const roleId = stack.roles[functionName];
  if (!roleId)
    throw new Error(
      `IAM check: the stack has no function ${functionName} (it has ${Object.keys(stack.roles).join(', ')})`,
    );
  const policies = identityPolicies(stack, roleId);
  for (const request of requests) {
    const memo = JSON.stringify([functionName, request]);
    if (allowed.has(memo)) continue;
    const result = await runSimulation(
      {
        request: {
          principal: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleId}/${functionName}`,
          action: request.action,
          resource: { resource: request.resource, accountId: ACCOUNT },
          contextVariables: request.context ?? {},
        },
        identityPolicies: policies,
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        resourcePolicy: request.resource.startsWith('arn:aws:s3:::')
          ? bucketPolicy(stack, request.resource)
          : undefined,
      },
      {},
    );
    if (result.resultType === 'error')
      throw new Error(`IAM check of ${call}: the simulation could not run: ${JSON.stringify(result.errors)}`);
    if (result.overallResult !== 'Allowed') {
      throw new Error(
        `AccessDenied (IAM check): ${functionName}'s role does not allow ${request.action} on ${request.resource} (${result.overallResult}), needed by ${call}`,
      );
    }
    allowed.add(memo);
  }
}

/**
 * Whether an AWS service, acting for this account (`cloudwatch.amazonaws.com` publishing an alarm, `s3.amazonaws.com`
 * sending a notification), may call `action` on `resource` under that resource's policy (a topic, queue or key
 * policy from the template): the calls services make between the stack's resources.
 */
export async function serviceMayCall(
  service: string,
  action: string,
  resource: string,
  resourcePolicy: Json,
  context: Record<string, string>,
): Promise<string> {
  const result = await runSimulation(
    {
      request: {
        principal: service,
        action,
        resource: { resource, accountId: ACCOUNT },
        contextVariables: { 'aws:SecureTransport': 'true', 'aws:SourceAccount': ACCOUNT, ...context },
      },
      identityPolicies: [],
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      resourcePolicy,
    },
    {},
  );
  return result.resultType === 'error' ? `error: ${JSON.stringify(result.errors)}` : String(result.overallResult);
}
