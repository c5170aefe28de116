import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FirehoseClient } from '@aws-sdk/client-firehose';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as collectHandler } from '../../functions/event-collect.js';
import { createCollectorStream } from '../../local/lambda-runtime/collector-stream.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { startTrinoAthena, type TrinoAthena } from '../../local/trino/trino-athena.js';
import {
  eventSink as eventSinkForTest,
  firehoseSink,
  installEventSink,
  type EventSink,
} from '../../shared/collect/event-sink.js';
import { installEngine } from '../../shared/engines/registry.js';
import { asFunction, deployed } from '../support/aws-rules/install.js';
import { ingestHandler } from '../support/deployed-functions.js';
import { ingestBucket, type IngestBucket } from '../support/ingest-bucket.js';
import { keysOf } from '../support/s3-keys.js';
import { sharedTrino } from '../support/shared-trino.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// The collector as the stack deploys it: the CollectEvent function (its calls authorized against its role in the
// synthesized template) puts each event's lines into a Firehose delivery stream (moto's), which writes them under
// `incoming/collected/` of the bucket; S3 announces the object, the ingest function imports it, and the Lambdas'
// Athena engine on Trino answers /v1/query from the bucket. Expected answers are worked out from the events sent.

const SITE = 'firehose.test';
const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

describe.skipIf(!trinoAvailable('Collector Firehose suite'))('events collected on the stack', () => {
  let api: TestApi;
  let moto: MotoServer;
  let target: IngestBucket;
  let cloud: TrinoAthena;
  let token: string;
  let sink: EventSink;
  const work = mkdtempSync(join(tmpdir(), 'collect-firehose-'));
  const collect = deployed('CollectEvent', collectHandler);

  beforeAll(async () => {
    moto = await startMoto();
    api = await startTestApi();
    token = (await api.createKey({ domains: [SITE] })).token;
    target = await ingestBucket(moto, 'collected-events-bucket');
    const stream = await createCollectorStream(moto, target.bucket);
    sink = firehoseSink(
      stream,
      new FirehoseClient({ endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials }),
    );
    installEventSink(sink);
    cloud = await startTrinoAthena({
      bucket: { s3: { ...moto.credentials, endpoint: moto.endpoint, region: moto.region, bucket: target.bucket } },
      resultReuseMinutes: 0,
      server: sharedTrino(),
    });
  }, 300_000);

  afterAll(async () => {
    installEventSink(undefined);
    installEngine(api.engine);
    await cloud?.close();
    await api?.close();
    await moto?.stop();
  });

  const send = async (body: unknown, userAgent: string, address: string) =>
    collect(
      {
        version: '2.0',
        routeKey: 'POST /api/event',
        rawPath: '/api/event',
        rawQueryString: '',
        headers: { 'user-agent': userAgent, 'content-type': 'text/plain' },
        body: JSON.stringify(body),
        isBase64Encoded: false,
        requestContext: { requestId: `r-${Math.random()}`, http: { method: 'POST', sourceIp: address } },
      } as unknown as APIGatewayProxyEventV2,
      { awsRequestId: 'collect', getRemainingTimeInMillis: () => 10_000 } as unknown as Context,
    );

  it('puts each event into the stream, which the ingest function imports into answers', async () => {
    // Two visitors: Firefox on Linux from California with two pageviews and a signup; Safari on an iPhone from
    // England with one pageview and a payment of 12.50 EUR.
    const events: [unknown, string, string][] = [
      [
        { n: 'pageview', u: `https://${SITE}/?utm_source=ads`, d: SITE, r: 'https://search.example/' },
        FIREFOX_LINUX,
        '8.8.8.8',
      ],
      [{ n: 'pageview', u: `https://${SITE}/pricing`, d: SITE }, FIREFOX_LINUX, '8.8.8.8'],
      [{ n: 'Signup', u: `https://${SITE}/pricing`, d: SITE, p: { plan: 'team' } }, FIREFOX_LINUX, '8.8.8.8'],
      [{ n: 'pageview', u: `https://${SITE}/shop`, d: SITE }, SAFARI_IPHONE, '81.2.69.142'],
      [
        { n: 'Buy', u: `https://${SITE}/shop`, d: SITE, $: { amount: 12.5, currency: 'EUR' } },
        SAFARI_IPHONE,
        '81.2.69.142',
      ],
    ];
    for (const [body, ua, address] of events) expect((await send(body, ua, address)).statusCode).toBe(202);

    const objects = (await keysOf(target.s3, target.bucket)).filter((k) => k.startsWith('incoming/collected/'));
    expect(objects.length).toBeGreaterThan(0);
    expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
    expect((await keysOf(target.s3, target.bucket)).filter((k) => k.startsWith('incoming/'))).toEqual([]);

    installEngine(cloud.engine);
    const query = async (body: Record<string, unknown>) => {
      const res = await api.request('POST', '/v1/query', { token, body: { domain: SITE, date_range: '7d', ...body } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.data as { dimensions: object; metrics: object }[]).map((r) => ({
        ...r.dimensions,
        ...r.metrics,
      }));
    };
    expect(
      await query({
        metrics: ['visitors', 'pageviews', 'visits'],
        dimensions: ['browser', 'country'],
        sort: { field: 'browser', order: 'asc' },
      }),
    ).toEqual([
      { browser: 'Firefox', country: 'US', visitors: 1, pageviews: 2, visits: 1 },
      { browser: 'Safari', country: 'GB', visitors: 1, pageviews: 1, visits: 1 },
    ]);
    expect(await query({ metrics: ['visitors'], dimensions: ['utm_source', 'referrer'] })).toEqual(
      expect.arrayContaining([{ utm_source: 'ads', referrer: 'search.example', visitors: 1 }]),
    );
    expect(await query({ metrics: ['revenue', 'conversions'], include_revenue: true })).toEqual([
      { revenue: 1250, conversions: 1 },
    ]);
    expect(
      await query({ metrics: ['visitors'], dimensions: ['event'], sort: { field: 'event', order: 'asc' } }),
    ).toEqual([
      { event: 'Buy', visitors: 1 },
      { event: 'Signup', visitors: 1 },
    ]);
  });

  it('splits what it writes into batches Firehose accepts (500 records, 4 MiB), losing no line', async () => {
    // 1,201 lines of 5 KiB: three batches by count, each well under 4 MiB; the rules layer refuses any other split.
    const lines = Array.from({ length: 1201 }, (_, i) => JSON.stringify({ i, pad: 'x'.repeat(5 * 1024) }));
    const before = new Set(await keysOf(target.s3, target.bucket));
    expect(eventSinkForTest()).toBe(sink);
    await asFunction('CollectEvent', () => sink.write(lines));
    const written = (await keysOf(target.s3, target.bucket)).filter((k) => !before.has(k) && k.startsWith('incoming/'));
    let count = 0;
    for (const key of written) {
      const object = await target.s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }));
      count += (await object.Body!.transformToString()).split('\n').filter(Boolean).length;
    }
    expect(count).toBe(lines.length);
  });
});
