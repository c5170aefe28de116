import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { routeList, type Route } from '../shared/routes.js';
import { DataTables } from './data-tables.js';
import { EVENTS_PREFIX, EventLake } from './event-lake.js';
import { EventCollector } from './event-collector.js';
import { RouteFunction } from './route-function.js';
import { INCOMING_PREFIX, StoreWriters } from './store-writers.js';
import type { StackSettings } from './settings.js';

// The whole service on AWS: an HTTP API with one route and one Lambda per entry of the shared route table, the
// DynamoDB tables, and the event lake Athena queries. Environment-agnostic, so `cdk synth` needs no account.

export interface AnalyticsApiStackProps extends StackProps {
  settings: StackSettings;
  /** The route table; tests may pass a subset, the app always passes all of it. */
  routes?: readonly Route[];
}

export class AnalyticsApiStack extends Stack {
  readonly functions = new Map<string, RouteFunction>();
  readonly writers: StoreWriters;
  readonly lake: EventLake;

  constructor(scope: Construct, id: string, props: AnalyticsApiStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const tables = new DataTables(this, 'Tables');
    const lake = (this.lake = new EventLake(this, 'Lake', settings));
    const writers = (this.writers = new StoreWriters(this, 'StoreWriters', { lake, tables, settings }));
    // Athena's workgroup-wide data usage control: every query of the workgroup together, per hour, to the alarm topic.
    writers.notifyOn(lake.scanAlarm(settings.athenaHourlyBytesAlarm));
    const collector = new EventCollector(this, 'Collector', lake);

    const api = new HttpApi(this, 'HttpApi', {
      apiName: id,
      createDefaultStage: false,
      // Only for the dashboard's origins, when it is hosted apart from the API.
      ...(settings.dashboardOrigins.length
        ? {
            corsPreflight: {
              allowOrigins: settings.dashboardOrigins,
              allowHeaders: ['authorization', 'content-type'],
              allowMethods: [CorsHttpMethod.GET, CorsHttpMethod.POST, CorsHttpMethod.DELETE],
              exposeHeaders: [
                'x-ratelimit-limit',
                'x-ratelimit-remaining',
                'x-ratelimit-reset',
                'retry-after',
                'x-request-id',
              ],
              maxAge: Duration.hours(1),
            },
          }
        : {}),
    });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', {
      retention: RetentionDays.THREE_MONTHS,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = new HttpStage(this, 'DefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: settings.apiRateLimit, burstLimit: settings.apiBurstLimit },
      // No client address: the collector's callers are sites' visitors, whose addresses are never kept
      // (docs/COLLECTING.md, "Privacy"); the handlers' own logs name a keyed request's key.
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            routeKey: '$context.routeKey',
            path: '$context.path',
            status: '$context.status',
            responseLength: '$context.responseLength',
            integrationError: '$context.integrationErrorMessage',
            latencyMs: '$context.responseLatency',
          }),
        ),
      },
    });

    for (const route of props.routes ?? routeList) {
      const routeFunction = new RouteFunction(this, route.name, { route, tables, lake, collector, settings });
      this.functions.set(route.name, routeFunction);
      api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.name}Integration`, routeFunction.function),
      });
      Validations.of(routeFunction).acknowledge({
        id: 'AwsSolutions-L1',
        reason:
          'Node.js 22 is the runtime this code is built and tested for (issue 5); move to a newer one deliberately, with the test suite.',
      });
      if (route.uses.includes('analytics')) {
        for (const id of lake.objectWildcardFindings()) {
          Validations.of(routeFunction).acknowledge({
            id,
            reason:
              'Athena reads event files under events/ and reads and writes its results under results/; object keys are per partition and per query, so only a prefix can name them.',
          });
        }
      }
    }

    Validations.of(api).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Every route checks its bearer API key in the handler (hashed key in the credentials table, scopes and ' +
        'domain rules); the same code serves the local runtime, and an authorizer would repeat the lookup.',
    });

    new CfnOutput(this, 'ApiUrl', { value: stage.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'EventsBucketName', {
      value: lake.eventsBucket.bucketName,
      description: `Put NDJSON, gzip NDJSON or Parquet under s3://<bucket>/${INCOMING_PREFIX}`,
    });
    new CfnOutput(this, 'IncomingLocation', {
      value: `s3://${lake.eventsBucket.bucketName}/${INCOMING_PREFIX}`,
      description: 'Where producers put events; the ingest function imports them',
    });
    new CfnOutput(this, 'IngestDeadLetterQueueUrl', {
      value: writers.deadLetters.queueUrl,
      description: 'Notifications of objects that failed every ingest attempt',
    });
    new CfnOutput(this, 'IngestAlarmTopicArn', {
      value: writers.alarmTopic.topicArn,
      description: 'Subscribe to hear when an object cannot be ingested',
    });
    new CfnOutput(this, 'EventsLocation', { value: `s3://${lake.eventsBucket.bucketName}/${EVENTS_PREFIX}` });
    new CfnOutput(this, 'CredentialsTableName', { value: tables.credentials.tableName });
    new CfnOutput(this, 'AnnotationsTableName', { value: tables.annotations.tableName });
    new CfnOutput(this, 'CountersTableName', { value: tables.counters.tableName });
    new CfnOutput(this, 'AthenaWorkGroup', { value: lake.workGroupName });
    new CfnOutput(this, 'GlueDatabase', { value: lake.databaseName });
  }
}
