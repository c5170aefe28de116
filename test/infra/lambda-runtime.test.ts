import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { AnalyticsApiStack } from '../../infra/analytics-api-stack.js';
import { defaultSettings } from '../../infra/settings.js';
import { createCollectorStream } from '../../local/lambda-runtime/collector-stream.js';
import { localStackFunctions, serveStackApi, type StackFunctions } from '../../local/lambda-runtime/stack-api.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { tableNames } from '../../shared/config.js';
import { routeList } from '../../shared/routes.js';
import { JOURNEYS_RANGE, journeyEvents } from '../fixtures/journeys-events.js';
import { keysOf } from '../support/s3-keys.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// The stack's functions as Lambda runs them, without Docker: each synthesized bundle (esbuild, as `cdk synth`
// makes it) under AWS's Runtime Interface Emulator and aws-lambda-ric on Node.js 22, with the template's
// environment and handler (local/lambda-runtime). Every route of the HTTP API answers through it as the same
// handler answers in this process, on the Athena path (the emulator over Trino) and dynalite; the ingest function
// imports an object from moto's S3 and upkeep runs. Cold starts and peak memory are reported.

const available = trinoAvailable('the Lambda runtime suite');
const runIf = available ? describe : describe.skip;

let api: TestApi;
let moto: MotoServer;
let stack: StackFunctions;
let served: { url: string; close(): Promise<void> };
let token: string;
const bucket = 'lambda-runtime-events';

beforeAll(async () => {
  if (!available) return;
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-out-'));
  const context = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
  const app = new App({ outdir, context });
  new AnalyticsApiStack(app, 'AnalyticsQueryApi', { settings: defaultSettings });
  app.synth();
  [api, moto] = await Promise.all([startTestApi({ engine: 'trino' }), startMoto()]);
  await api.importEvents(journeyEvents);
  token = (await api.createKey({ domains: ['journeys.test'], scopes: ['analytics:read', 'analytics:write'] })).token;
  const s3 = new S3Client({
    endpoint: moto.endpoint,
    region: moto.region,
    credentials: moto.credentials,
    forcePathStyle: true,
  });
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  // The functions log as on Lambda (errors with their cause), for a failure's message below.
  process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
  stack = localStackFunctions(outdir, {
    dynamodb: api.dynamo.endpoint,
    tables: tableNames(),
    s3: { endpoint: moto.endpoint, bucket },
    firehose: { endpoint: moto.endpoint, stream: await createCollectorStream(moto, bucket) },
    athena: { endpoint: api.trino!.endpoint, location: api.trino!.location },
    // The data folder's DynamoDB takes only its own credentials; moto and the Athena emulator take any.
    credentials: api.dynamo.credentials,
  });
  served = await serveStackApi(stack);
}, 600_000);

afterAll(async () => {
  await served?.close();
  await stack?.close();
  await api?.close();
  await moto?.stop();
  for (const f of stack?.started() ?? []) console.info(`${f.fn.name}: cold start ${f.initMs()?.toFixed(0)} ms`);
});

/**
 * A request each route answers with data from the fixture (a new route without one here fails the test); `undo`
 * takes back what the first answer stored, where a second equal request would otherwise be refused (a goal twice).
 */
const requests: Record<string, { method: string; path: string; body?: unknown; undo?: () => Promise<void> }> = {
  JourneysList: {
    method: 'POST',
    path: '/v1/journeys/list',
    body: { domain: 'journeys.test', date_range: JOURNEYS_RANGE },
  },
  JourneysTimeline: {
    method: 'POST',
    path: '/v1/journeys/timeline',
    body: { domain: 'journeys.test', visitor_id: 'alice', date_range: JOURNEYS_RANGE },
  },
  JourneysStats: { method: 'POST', path: '/v1/journeys/stats', body: { domain: 'journeys.test', visitor_id: 'alice' } },
  JourneysActivity: {
    method: 'POST',
    path: '/v1/journeys/activity',
    body: { domain: 'journeys.test', visitor_id: 'alice' },
  },
  AnnotationsList: { method: 'GET', path: '/v1/annotations?domain=journeys.test' },
  AnnotationsCreate: {
    method: 'POST',
    path: '/v1/annotations',
    body: { domain: 'journeys.test', date: '2026-05-05', title: 'Launch' },
  },
  AnnotationsDelete: { method: 'DELETE', path: '/v1/annotations/no-such-annotation?domain=journeys.test' },
  GoalsList: { method: 'GET', path: '/v1/goals?domain=journeys.test' },
  GoalsCreate: {
    method: 'POST',
    path: '/v1/goals',
    body: { domain: 'journeys.test', event_name: 'signup' },
    undo: async () => {
      const goals = await fetch(new URL('/v1/goals?domain=journeys.test', api.url), {
        headers: { authorization: `Bearer ${token}` },
      }).then((r) => r.json() as Promise<{ data: { id: string }[] }>);
      for (const goal of goals.data)
        await fetch(new URL(`/v1/goals/${goal.id}?domain=journeys.test`, api.url), {
          method: 'DELETE',
          headers: { authorization: `Bearer ${token}` },
        });
    },
  },
  GoalsDelete: { method: 'DELETE', path: '/v1/goals/no-such-goal?domain=journeys.test' },
  SharedLinksList: { method: 'GET', path: '/v1/shared-links?domain=journeys.test' },
  SharedLinksCreate: { method: 'POST', path: '/v1/shared-links', body: { domain: 'journeys.test', name: 'Board' } },
  SharedLinksDelete: { method: 'DELETE', path: '/v1/shared-links/no-such-link?domain=journeys.test' },
  EventsList: { method: 'GET', path: `/v1/events?domain=journeys.test&date_range=${JOURNEYS_RANGE.join(',')}` },
  EventProperties: {
    method: 'GET',
    path: `/v1/events/signup/properties?domain=journeys.test&date_range=${JOURNEYS_RANGE.join(',')}`,
  },
  EventPropertyValues: {
    method: 'GET',
    path: `/v1/events/signup/properties/plan?domain=journeys.test&date_range=${JOURNEYS_RANGE.join(',')}`,
  },
  // The collector answers 202 with no body; here in-process into the local sink, there into moto's Firehose.
  CollectEvent: {
    method: 'POST',
    path: '/api/event',
    body: { n: 'pageview', u: 'https://journeys.test/from-lambda', d: 'journeys.test' },
  },
  CollectEventPreflight: { method: 'OPTIONS', path: '/api/event' },
  Query: {
    method: 'POST',
    path: '/v1/query',
    body: {
      domain: 'journeys.test',
      metrics: ['visitors', 'pageviews'],
      dimensions: ['page'],
      date_range: JOURNEYS_RANGE,
    },
  },
  QueryBatch: {
    method: 'POST',
    path: '/v1/query/batch',
    body: {
      queries: [
        { domain: 'journeys.test', metrics: ['visitors'], date_range: JOURNEYS_RANGE },
        { domain: 'journeys.test', metrics: ['pageviews'], dimensions: ['country'], date_range: JOURNEYS_RANGE },
      ],
    },
  },
};

async function ask(base: string, r: { method: string; path: string; body?: unknown }) {
  const res = await fetch(new URL(r.path, base), {
    method: r.method,
    headers: {
      authorization: `Bearer ${token}`,
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
      ...(r.body ? { 'content-type': 'application/json' } : {}),
    },
    ...(r.body ? { body: JSON.stringify(r.body) } : {}),
  });
  const text = await res.text();
  const body = (text ? JSON.parse(text) : {}) as Record<string, any>;
  // Timing and the request's own id differ between two runs of the same request (a batch: of each answer).
  for (const answer of [body, ...(Array.isArray(body.results) ? body.results : [])])
    if (answer.meta) for (const key of ['query_ms', 'bytes_scanned', 'request_id']) delete answer.meta[key];
  // An annotation (or a shared link's key) created twice differs by its id, key and times.
  for (const key of ['id', 'key_id', 'token', 'created_at', 'updated_at']) if (body[key]) body[key] = `<${key}>`;
  return { status: res.status, body };
}

runIf("the stack's functions in the Lambda runtime (Runtime Interface Emulator, aws-lambda-ric, Node.js 22)", () => {
  it('serves every route of the template as the handlers answer in-process, each in its own runtime', async () => {
    expect(Object.keys(requests).sort()).toEqual(routeList.map((r) => r.name).sort());
    expect(
      stack.functions
        .filter((f) => f.routeKey)
        .map((f) => f.name)
        .sort(),
    ).toEqual(routeList.map((r) => r.name).sort());
    for (const route of routeList) {
      const request = requests[route.name]!;
      const viaLambda = await ask(served.url, request);
      await request.undo?.();
      const inProcess = await ask(api.url, request);
      const printed =
        viaLambda.status >= 500
          ? stack
              .started()
              .find((f) => f.fn.name === route.name)
              ?.log()
              .slice(-3000)
          : '';
      expect(viaLambda, `${route.name}${printed ? `\n${printed}` : ''}`).toEqual(inProcess);
      expect(viaLambda.status, route.name).toBeLessThan(500);
    }
    // The collector's record, delivered by moto's Firehose under incoming/collected/ of the bucket.
    const { Contents = [] } = await new S3Client({
      endpoint: moto.endpoint,
      region: moto.region,
      credentials: moto.credentials,
      forcePathStyle: true,
    }).send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'incoming/collected/' }));
    expect(Contents).toHaveLength(1);
    // No key: 401, from the function itself.
    expect((await fetch(new URL('/v1/annotations?domain=journeys.test', served.url))).status).toBe(401);
    for (const f of stack.started()) {
      expect(f.initMs(), f.fn.name).toBeGreaterThan(0);
      console.info(`${f.fn.name}: peak memory ${((f.peakMemoryBytes() ?? 0) / 2 ** 20).toFixed(0)} MiB`);
    }
  }, 600_000);

  it('runs the ingest function on an S3 notification from the queue, then upkeep on its schedule', async () => {
    const s3 = new S3Client({
      endpoint: moto.endpoint,
      region: moto.region,
      credentials: moto.credentials,
      forcePathStyle: true,
    });
    const body = journeyEvents.map((e) => JSON.stringify({ ...e, domain: 'lambda.test' })).join('\n');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'incoming/one.ndjson', Body: body }));
    const notification = {
      Records: [
        {
          eventSource: 'aws:s3',
          eventName: 'ObjectCreated:Put',
          s3: { bucket: { name: bucket }, object: { key: 'incoming/one.ndjson' } },
        },
      ],
    };
    const ingest = await stack.running('Ingest');
    const result = await ingest.invoke({
      Records: [
        {
          messageId: 'm1',
          receiptHandle: 'r',
          body: JSON.stringify(notification),
          attributes: {},
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
          awsRegion: 'us-east-1',
        },
      ],
    });
    expect(result).toEqual({ batchItemFailures: [] });
    const keys = await keysOf(s3, bucket);
    expect(keys).toContain('ingested/one.ndjson');
    expect(keys.filter((k) => k.startsWith('events/domain=lambda.test/')).length).toBeGreaterThan(0);
    const upkeep = await stack.running('Upkeep');
    expect(await upkeep.invoke({ 'detail-type': 'Scheduled Event', source: 'aws.events', detail: {} })).toMatchObject({
      compacted: expect.any(Array),
    });
    for (const f of [ingest, upkeep])
      console.info(
        `${f.fn.name}: cold start ${f.initMs()?.toFixed(0)} ms, peak memory ${((f.peakMemoryBytes() ?? 0) / 2 ** 20).toFixed(0)} MiB`,
      );
  }, 600_000);
});
