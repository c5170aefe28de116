import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AnalyticsApiStack } from '../../infra/analytics-api-stack.js';
import { STACK_NAME } from '../../infra/stack-name.js';
import { defaultSettings, type StackSettings } from '../../infra/settings.js';

// The Glue tables exactly as the stack deploys them, read from the synthesized template rather than restated:
// the Trino catalog is created from these, so a column, partition key or projection property changed in the
// stack is what the Trino-backed tests run against.

export interface GlueColumn {
  name: string;
  /** A Glue (Hive) type name: `string`, `bigint`, `array<string>`, ... */
  type: string;
}

export interface GlueTable {
  database: string;
  name: string;
  columns: GlueColumn[];
  partitionKeys: GlueColumn[];
  /** Table parameters: `projection.*`, `storage.location.template`, ... with the bucket written `s3://${EVENTS_BUCKET}`. */
  parameters: Record<string, string>;
  /** The storage descriptor's location, bucket written the same way. */
  location: string;
}

/** Stands for the events bucket's name, which the template leaves to CloudFormation. */
export const EVENTS_BUCKET = '${EVENTS_BUCKET}';

// A CloudFormation template is untyped JSON; the fields read here are those of AWS::Glue::Table.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Synthesizes the stack without its functions (the tables do not depend on them) and returns its Glue tables. */
export function synthesizedGlueTables(settings: StackSettings = defaultSettings): GlueTable[] {
  const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const stack = new AnalyticsApiStack(app, STACK_NAME, { settings, routes: [] });
  const resources: Record<string, Json> = Template.fromStack(stack).toJSON().Resources;
  const bucketIds = Object.entries(resources)
    .filter(([id, r]) => r.Type === 'AWS::S3::Bucket' && id.includes('EventsBucket'))
    .map(([id]) => id);
  if (bucketIds.length !== 1) throw new Error(`expected one events bucket in the template, found ${bucketIds.length}`);
  const text = (value: Json): string => resolveText(value, bucketIds[0]!);
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::Glue::Table')
    .map((r) => {
      const input = r.Properties.TableInput;
      const descriptor = input.StorageDescriptor;
      return {
        database: text(r.Properties.DatabaseName),
        name: text(input.Name),
        columns: descriptor.Columns.map((c: Json) => ({ name: c.Name, type: c.Type })),
        partitionKeys: input.PartitionKeys.map((c: Json) => ({ name: c.Name, type: c.Type })),
        parameters: Object.fromEntries(
          Object.entries(input.Parameters as Record<string, Json>).map(([k, v]) => [k, text(v)]),
        ),
        location: text(descriptor.Location),
      };
    });
}

/** A template value as text: plain strings, `Fn::Join` and the events bucket's `Ref`; anything else is unexpected. */
function resolveText(value: Json, bucketId: string): string {
  if (typeof value === 'string') return value;
  if (value?.Ref === bucketId) return EVENTS_BUCKET;
  if (Array.isArray(value?.['Fn::Join'])) {
    const [separator, parts] = value['Fn::Join'] as [string, Json[]];
    return parts.map((part) => resolveText(part, bucketId)).join(separator);
  }
  throw new Error(`cannot read ${JSON.stringify(value)} as text`);
}
