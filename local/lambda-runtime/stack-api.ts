import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { TableNames } from '../../shared/config.js';
import { createLocalServer } from '../server/http-server.js';
import { lambdaRuntime } from '../tools/lambda-runtime-install.js';
import { startFunction, type RunningFunction } from './function-runner.js';
import { stackFunctions, type StackFunction } from './stack-functions.js';

// The stack's functions run locally in the Lambda runtime (function-runner.ts), against local stand-ins of the
// services the template wires them to: each variable the template fills from a resource (a table's name, the
// bucket) gets the local one, and the SDK's service endpoints point at the stand-ins.

export interface LocalServices {
  /** dynalite's URL. */
  dynamodb: string;
  tables: TableNames;
  /** An S3-compatible server (moto) and the bucket standing for the events bucket: for the store writers. */
  s3?: { endpoint: string; bucket: string };
  /** A Firehose delivery stream on an AWS-compatible server (moto's), for the collector (collector-stream.ts). */
  firehose?: { endpoint: string; stream: string };
  /** The Athena emulator's URL (over Trino) and the bucket its tables read (`local://…` or `s3://…`): for the analytics routes. */
  athena?: { endpoint: string; location: string };
  /**
   * What the functions sign every AWS call with: the data folder's credentials, which its DynamoDB and Athena
   * emulator require (local/server/local-dynamo.ts); moto takes any.
   */
  credentials: { accessKeyId: string; secretAccessKey: string };
}

const fromResource: Record<string, (s: LocalServices) => string | undefined> = {
  CREDENTIALS_TABLE: (s) => s.tables.credentials,
  ANNOTATIONS_TABLE: (s) => s.tables.annotations,
  COUNTERS_TABLE: (s) => s.tables.counters,
  EVENTS_BUCKET: (s) => s.s3?.bucket,
  ATHENA_EVENTS_LOCATION: (s) => s.athena?.location,
  EVENTS_STREAM_NAME: (s) => s.firehose?.stream,
};

/** The function's environment with the local services in place of the stack's resources. */
export function localEnvironment(fn: StackFunction, services: LocalServices): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(fn.environment)) {
    if (typeof value === 'string') env[name] = value;
    else {
      const local = fromResource[name]?.(services);
      if (local === undefined)
        throw new Error(`${fn.name}: ${name} refers to ${value.ref}, which has no local stand-in here`);
      env[name] = local;
    }
  }
  const { credentials } = services;
  return {
    ...env,
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: services.dynamodb,
    ...(services.s3 ? { AWS_ENDPOINT_URL_S3: services.s3.endpoint, AWS_S3_FORCE_PATH_STYLE: 'true' } : {}),
    ...(services.athena ? { AWS_ENDPOINT_URL_ATHENA: services.athena.endpoint } : {}),
    ...(services.firehose ? { AWS_ENDPOINT_URL_FIREHOSE: services.firehose.endpoint } : {}),
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? env.LOG_LEVEL ?? 'INFO',
  };
}

export interface StackFunctions {
  functions: StackFunction[];
  /** The function named so, started at its first call (a cold start, as on Lambda), then kept warm. */
  running(name: string): Promise<RunningFunction>;
  /** Every function started so far. */
  started(): RunningFunction[];
  close(): Promise<void>;
}

export function localStackFunctions(cdkOut: string, services: LocalServices): StackFunctions {
  const functions = stackFunctions(cdkOut);
  const runtime = lambdaRuntime();
  const starts = new Map<string, Promise<RunningFunction>>();
  const done: RunningFunction[] = [];
  return {
    functions,
    running: (name) => {
      let start = starts.get(name);
      if (!start) {
        const fn = functions.find((f) => f.name === name);
        if (!fn)
          throw new Error(`The stack has no function ${name} (it has ${functions.map((f) => f.name).join(', ')})`);
        start = startFunction(fn, runtime, localEnvironment(fn, services)).then((r) => (done.push(r), r));
        starts.set(name, start);
      }
      return start;
    },
    started: () => [...done],
    close: async () => {
      await Promise.all(
        [...starts.values()].map((s) =>
          s.then(
            (r) => r.stop(),
            () => undefined,
          ),
        ),
      );
    },
  };
}

/** The stack's HTTP API: each template route's event to its function in the Lambda runtime. */
export async function serveStackApi(stack: StackFunctions, port = 0): Promise<{ url: string; close(): Promise<void> }> {
  const byRoute = new Map(stack.functions.filter((f) => f.routeKey).map((f) => [f.routeKey!, f.name]));
  const server = createLocalServer({}, undefined, async (route, event) => {
    const name = byRoute.get(`${route.method} ${route.path}`);
    // API Gateway's answer when a route has no integration.
    if (!name)
      return { statusCode: 404, headers: { 'content-type': 'application/json' }, body: '{"message":"Not Found"}' };
    return (await (await stack.running(name)).invoke(event)) as APIGatewayProxyStructuredResultV2;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
