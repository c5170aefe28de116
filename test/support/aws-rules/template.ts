import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import type { CfnResource } from 'aws-cdk-lib';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { AnalyticsApiStack } from '../../../infra/analytics-api-stack.js';
import { defaultSettings, type StackSettings } from '../../../infra/settings.js';

// The synthesized stack as the tests see AWS: its template with every intrinsic function resolved to concrete ARNs
// and names in one made-up account, so that IAM policies (identity and resource) can be evaluated by an IAM policy
// evaluator exactly as they are deployed. Bundling is off: the template's policies do not depend on the code.

export type Json = any;

export const ACCOUNT = '123456789012';
export const REGION = 'us-east-1';
/** The names the resolved template gives the stack's buckets (S3 names are global, so they are named here). */
export const EVENTS_BUCKET = 'analytics-events-under-test';
export const RESULTS_BUCKET = 'analytics-athena-results-under-test';

export interface ResolvedStack {
  /** Resources by logical id, every intrinsic resolved. */
  resources: Record<string, { Type: string; Properties: Json }>;
  /** The stack's functions by name (`Ingest`, `Upkeep`, and each route's name) → their role's logical id. */
  roles: Record<string, string>;
  /** Each table's logical id by the name the code knows it by. */
  tables: Record<'credentials' | 'annotations' | 'counters', string>;
  workGroup: string;
  database: string;
}

export function synthesizeResolved(settings: StackSettings = defaultSettings): ResolvedStack {
  const context = JSON.parse(readFileSync(new URL('../../../cdk.json', import.meta.url), 'utf8')).context;
  const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  const stack = new AnalyticsApiStack(app, 'AnalyticsQueryApi', { settings });
  const template = app.synth().getStackByName('AnalyticsQueryApi').template as {
    Resources: Record<string, { Type: string; Properties: Json }>;
  };
  const idOf = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as CfnResource);
  const roleOf = (fn: { role?: unknown }) => idOf(fn.role as Role);
  const roles: Record<string, string> = { Ingest: roleOf(stack.writers.ingest), Upkeep: roleOf(stack.writers.upkeep) };
  for (const [name, route] of stack.functions) roles[name] = roleOf(route.function);
  const tables = stack.node.findChild('Tables') as unknown as Record<
    'credentials' | 'annotations' | 'counters',
    { node: { defaultChild?: unknown } }
  >;
  const resolver = new Resolver(template.Resources);
  const resources = Object.fromEntries(
    Object.entries(template.Resources).map(([id, r]) => [
      id,
      { Type: r.Type, Properties: resolver.resolve(r.Properties ?? {}) },
    ]),
  );
  return {
    resources,
    roles,
    tables: {
      credentials: idOf(tables.credentials),
      annotations: idOf(tables.annotations),
      counters: idOf(tables.counters),
    },
    workGroup: stack.lake.workGroupName,
    database: stack.lake.databaseName,
  };
}

/** Resolves Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select and the pseudo parameters the template uses. */
class Resolver {
  constructor(private readonly resources: Record<string, { Type: string; Properties?: Json }>) {}

  resolve(value: Json): Json {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (value === null || typeof value !== 'object') return value;
    const keys = Object.keys(value);
    if (keys.length === 1) {
      const [fn] = keys as [string];
      const arg = value[fn];
      if (fn === 'Ref') return this.ref(arg);
      if (fn === 'Fn::GetAtt') return this.getAtt(arg[0], arg[1]);
      if (fn === 'Fn::Join') return (this.resolve(arg[1]) as string[]).join(arg[0]);
      if (fn === 'Fn::Select') return this.resolve(arg[1])[Number(arg[0])];
      if (fn === 'Fn::Split') return String(this.resolve(arg[1])).split(arg[0]);
      if (fn === 'Fn::Sub') {
        const [text, vars] = typeof arg === 'string' ? [arg, {}] : [arg[0], this.resolve(arg[1])];
        return text.replace(/\$\{([^}]+)\}/g, (_: string, name: string) =>
          name in vars
            ? vars[name]
            : name.includes('.')
              ? this.getAtt(name.split('.')[0]!, name.split('.')[1]!)
              : this.ref(name),
        );
      }
    }
    return Object.fromEntries(keys.map((k) => [k, this.resolve(value[k])]));
  }

  private type(id: string): string {
    const resource = this.resources[id];
    if (!resource) throw new Error(`The template names no resource ${id}`);
    return resource.Type;
  }

  /** A resource's physical name: its own name property where the template sets one, else one made from its id. */
  name(id: string): string {
    const type = this.type(id);
    const props = this.resources[id]!.Properties ?? {};
    if (type === 'AWS::S3::Bucket')
      return id.includes('AthenaResults')
        ? RESULTS_BUCKET
        : id.includes('EventsBucket')
          ? EVENTS_BUCKET
          : `bucket-${id.toLowerCase()}`;
    if (type === 'AWS::Athena::WorkGroup' || type === 'AWS::Glue::Database')
      return this.resolve(props.Name ?? props.DatabaseInput?.Name);
    return id;
  }

  ref(id: string): string {
    const pseudo: Record<string, string> = {
      'AWS::AccountId': ACCOUNT,
      'AWS::Region': REGION,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': 'AnalyticsQueryApi',
      'AWS::StackId': `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/AnalyticsQueryApi/1`,
      'AWS::NoValue': '',
    };
    if (id in pseudo) return pseudo[id]!;
    if (!this.resources[id]) return `parameter-${id}`;
    const type = this.type(id);
    if (type === 'AWS::SNS::Topic') return `arn:aws:sns:${REGION}:${ACCOUNT}:${id}`;
    if (type === 'AWS::SQS::Queue') return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${id}`;
    if (type === 'AWS::KMS::Key') return `key-${id.toLowerCase()}`;
    return this.name(id);
  }

  getAtt(id: string, attribute: string): string {
    const type = this.type(id);
    const name = this.name(id);
    if (attribute === 'Arn') {
      const arns: Record<string, string> = {
        'AWS::S3::Bucket': `arn:aws:s3:::${name}`,
        'AWS::DynamoDB::Table': `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`,
        'AWS::SQS::Queue': `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`,
        'AWS::SNS::Topic': `arn:aws:sns:${REGION}:${ACCOUNT}:${name}`,
        'AWS::KMS::Key': `arn:aws:kms:${REGION}:${ACCOUNT}:key/${this.ref(id)}`,
        'AWS::Logs::LogGroup': `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}:*`,
        'AWS::Lambda::Function': `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`,
        'AWS::IAM::Role': `arn:aws:iam::${ACCOUNT}:role/${name}`,
        'AWS::CloudWatch::Alarm': `arn:aws:cloudwatch:${REGION}:${ACCOUNT}:alarm:${name}`,
        'AWS::Events::Rule': `arn:aws:events:${REGION}:${ACCOUNT}:rule/${name}`,
        'AWS::KinesisFirehose::DeliveryStream': `arn:aws:firehose:${REGION}:${ACCOUNT}:deliverystream/${name}`,
      };
      if (type in arns) return arns[type]!;
    }
    if (type === 'AWS::SQS::Queue' && attribute === 'QueueName') return name;
    if (type === 'AWS::S3::Bucket' && attribute === 'DomainName') return `${name}.s3.amazonaws.com`;
    return `${id}.${attribute}`;
  }
}
