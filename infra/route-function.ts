import { existsSync } from 'node:fs';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  CUSTOM_EVENT_BUCKETS_TABLE,
  PAGE_BUCKETS_TABLE,
  PAGEVIEW_BUCKETS_TABLE,
  SESSION_FRAGMENTS_TABLE,
  VISITOR_DAYS_TABLE,
} from '../shared/events/derived-relations.js';
import type { Route } from '../shared/routes.js';
import type { DataTables } from './data-tables.js';
import type { EventCollector } from './event-collector.js';
import type { EventLake } from './event-lake.js';
import { ANALYTICS_FUNCTION_TIMEOUT_SECONDS, type StackSettings } from './settings.js';
import { lambdaCode, projectRoot } from './lambda-code.js';

// One Lambda per route: `functions/<route.handler>.ts`, bundled by esbuild on this machine (no Docker), with
// its own role that holds exactly the grants of `route.uses` plus what every handler needs.

/** Each route's function: its memory, which also sets its CPU share and its price per second (bench/aws-bill.ts). */
export const ROUTE_FUNCTION_MEMORY_MB = 512;
export const SERVICE_NAME = 'analytics-api';

export interface RouteFunctionProps {
  route: Route;
  tables: DataTables;
  lake: EventLake;
  collector: EventCollector;
  settings: StackSettings;
}

export class RouteFunction extends Construct {
  readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, { route, tables, lake, collector, settings }: RouteFunctionProps) {
    super(scope, id);
    const entry = `${projectRoot}functions/${route.handler}.ts`;
    if (!existsSync(entry))
      throw new Error(`Route ${route.name} names handler functions/${route.handler}.ts, which does not exist`);
    const analytics = route.uses.includes('analytics');

    const logGroup = new LogGroup(this, 'Logs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Our own role instead of the default one with AWSLambdaBasicExecutionRole: writes to this log group only.
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    logGroup.grantWrite(role);

    const environment: Record<string, string> = {
      CREDENTIALS_TABLE: tables.credentials.tableName,
      COUNTERS_TABLE: tables.counters.tableName,
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      LOG_LEVEL: settings.logLevel,
      NODE_OPTIONS: '--enable-source-maps',
    };
    if (route.uses.includes('annotations')) environment.ANNOTATIONS_TABLE = tables.annotations.tableName;
    const collects = route.uses.includes('events');
    if (collects) {
      environment.EVENTS_STREAM_NAME = collector.streamName;
      environment.COLLECT_RATE_LIMIT_PER_MINUTE = String(settings.collectRateLimitPerMinute);
    }
    if (analytics) {
      Object.assign(environment, {
        ATHENA_WORKGROUP: lake.workGroupName,
        ATHENA_DATABASE: lake.databaseName,
        ATHENA_TABLE: lake.tableName,
        ATHENA_SESSIONS_TABLE: SESSION_FRAGMENTS_TABLE,
        ATHENA_BUCKETS_TABLE: PAGEVIEW_BUCKETS_TABLE,
        ATHENA_PAGES_TABLE: PAGE_BUCKETS_TABLE,
        ATHENA_VISITORS_TABLE: VISITOR_DAYS_TABLE,
        ATHENA_CUSTOM_EVENTS_TABLE: CUSTOM_EVENT_BUCKETS_TABLE,
        // The Glue tables' bucket, as Trino spells a file's "$path": hidden files are left out by path, never opened.
        ATHENA_EVENTS_LOCATION: `s3://${lake.eventsBucket.bucketName}`,
        ATHENA_RESULT_REUSE_MINUTES: String(settings.athenaResultReuseMinutes),
        ATHENA_QUERY_TIMEOUT_MS: String(settings.athenaQueryTimeoutMs),
        ATHENA_MAX_CONCURRENT_QUERIES: String(settings.athenaMaxConcurrentQueries),
      });
    }

    this.function = new NodejsFunction(this, 'Function', {
      description: `${route.method} ${route.path}`,
      entry,
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: ROUTE_FUNCTION_MEMORY_MB,
      timeout: Duration.seconds(analytics ? ANALYTICS_FUNCTION_TIMEOUT_SECONDS : 10),
      role,
      logGroup,
      environment,
      ...lambdaCode({ withGeoDatabase: collects }),
    });

    // Keyed routes authenticate and count requests; the public collector reads no key, and its preflight nothing.
    if (route.scope !== null) tables.grantRequestAdmission(role);
    else if (collects) tables.grantCollecting(role);
    if (route.uses.includes('annotations')) tables.grantAnnotations(role);
    if (route.uses.includes('credentials')) tables.grantCredentialWriting(role);
    if (analytics) lake.grantQuery(role);
    if (collects) collector.grantPut(role);
  }
}
