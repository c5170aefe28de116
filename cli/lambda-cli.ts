import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { App } from 'aws-cdk-lib';
import { AnalyticsApiStack } from '../infra/analytics-api-stack.js';
import { settingsFromContext } from '../infra/settings.js';
import { createCollectorStream } from '../local/lambda-runtime/collector-stream.js';
import { localStackFunctions, serveStackApi } from '../local/lambda-runtime/stack-api.js';
import { startLocalApi } from '../local/server/local-api.js';
import { tableNames } from '../shared/config.js';
import { routeList } from '../shared/routes.js';

// `npm run lambda -- invoke <function> [--event FILE]` and `npm run lambda -- serve [--port N]`: the stack's
// functions as Lambda runs them (AWS's Runtime Interface Emulator, aws-lambda-ric on Node.js 22), what SAM's
// `sam local invoke` and `start-api` do, without Docker. The stack is synthesized into cdk.out first, as
// `npx cdk synth` does; the functions reach the local services of the data folder (dynalite, and the Athena emulator
// over Trino, as `ANALYTICS_ENGINE=trino npm start` runs them), and, for the store writers and the collector, an
// S3-compatible server named with --s3-endpoint and --bucket (the collector's delivery stream is made there).

const usage = `usage:
  npm run lambda -- invoke <function> [--event FILE] [--s3-endpoint URL --bucket NAME]
  npm run lambda -- serve [--port 3001] [--s3-endpoint URL --bucket NAME]
functions: Ingest, Upkeep, ${routeList.map((r) => r.name).join(', ')}`;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    event: { type: 'string' },
    port: { type: 'string' },
    's3-endpoint': { type: 'string' },
    bucket: { type: 'string' },
    help: { type: 'boolean' },
  },
});
const [command, name] = positionals;
if (values.help || (command !== 'invoke' && command !== 'serve') || (command === 'invoke' && !name)) {
  console.error(usage);
  process.exit(values.help ? 0 : 2);
}
if (Boolean(values['s3-endpoint']) !== Boolean(values.bucket)) {
  console.error('lambda: --s3-endpoint and --bucket go together');
  process.exit(2);
}

const cdkOut = 'cdk.out';
const context = JSON.parse(readFileSync('cdk.json', 'utf8')).context;
const app = new App({ outdir: cdkOut, context });
new AnalyticsApiStack(app, 'AnalyticsQueryApi', { settings: settingsFromContext(app.node) });
app.synth();

const analytics = command === 'serve' || routeList.some((r) => r.name === name && r.uses.includes('analytics'));
const local = await startLocalApi({ engine: analytics ? 'trino' : 'duckdb' });
// With an S3-compatible server, the collector writes to a delivery stream made there (when it models Firehose, as
// moto does), so its records land under the bucket's incoming/collected/ as on the stack.
const firehose = values['s3-endpoint']
  ? {
      endpoint: values['s3-endpoint'],
      stream: await createCollectorStream(
        {
          endpoint: values['s3-endpoint'],
          region: process.env.AWS_REGION ?? 'us-east-1',
          credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        },
        values.bucket!,
      ),
    }
  : undefined;
const stack = localStackFunctions(cdkOut, {
  dynamodb: local.dynamo.endpoint,
  // The data folder's DynamoDB takes only its own credentials; moto and the Athena emulator take any.
  credentials: local.dynamo.credentials,
  tables: tableNames(),
  ...(values['s3-endpoint'] ? { s3: { endpoint: values['s3-endpoint'], bucket: values.bucket! } } : {}),
  ...(firehose ? { firehose } : {}),
  ...(local.trino ? { athena: { endpoint: local.trino.endpoint, location: local.trino.location } } : {}),
});
const stop = async () => {
  await stack.close();
  await local.close();
};

if (command === 'invoke') {
  try {
    const event: unknown = values.event ? JSON.parse(readFileSync(values.event, 'utf8')) : {};
    const fn = await stack.running(name!);
    const started = performance.now();
    const result = await fn.invoke(event);
    console.log(JSON.stringify(result, null, 2));
    console.error(
      `${name}: cold start ${fn.initMs()?.toFixed(0)} ms, invocation ${Math.round(performance.now() - started)} ms, peak memory ${((fn.peakMemoryBytes() ?? 0) / 2 ** 20).toFixed(0)} MiB`,
    );
  } catch (error) {
    console.error(`lambda: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    await stop();
  }
} else {
  const served = await serveStackApi(stack, Number(values.port ?? 3001));
  console.log(
    `The stack's HTTP API on ${served.url}: each route's function in the Lambda runtime, started at its first request (data in ${local.paths.dataDir})`,
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      for (const f of stack.started())
        console.log(
          `${f.fn.name}: cold start ${f.initMs()?.toFixed(0)} ms, peak memory ${((f.peakMemoryBytes() ?? 0) / 2 ** 20).toFixed(0)} MiB`,
        );
      void served
        .close()
        .then(stop)
        .then(() => process.exit(0));
    });
  }
}
