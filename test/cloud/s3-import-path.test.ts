import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { derivedUrlOf, s3Publisher, s3StoredDays } from '../../ingest/s3-store.js';
import { importEvents } from '../../local/store/importer.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { startTrinoAthena, type TrinoAthena } from '../../local/trino/trino-athena.js';
import { installEngine } from '../../shared/engines/registry.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { engineCallEvents, engineCalls, sendCall, SHOP } from '../support/engine-calls.js';
import { domain as generatedDomain } from '../support/generated-sessions.js';
import { rotatingToken } from '../support/rotating-token.js';
import { keysOf } from '../support/s3-keys.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// The cloud data path as `npm run import -- --s3` writes it, read as Athena reads it: the events go to a real S3
// implementation (moto's server) through the same importer and publisher the CLI uses, ZSTD Parquet with every
// derived relation beside the events; Trino reads that bucket through the stack's Glue tables with its S3 file
// system; the Lambdas' Athena engine answers through the emulator. Every answer must equal DuckDB's over the same
// events imported into a local store.

const BUCKET = 'events-bucket';
const EVENTS_URL = `s3://${BUCKET}/events`;
const CALLS = 120;

describe.skipIf(!trinoAvailable('S3 import path suite'))('events imported to S3 answer as the local store does', () => {
  let api: TestApi;
  let moto: MotoServer;
  let s3: S3Client;
  let cloud: TrinoAthena;
  let tokens: Record<string, () => Promise<string>>;

  beforeAll(async () => {
    moto = await startMoto();
    s3 = new S3Client({ endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials, forcePathStyle: true });
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    api = await startTestApi();
    const toS3 = {
      publish: s3Publisher(EVENTS_URL, s3),
      publishDerived: Object.fromEntries(derivedRelations.map((r) => [r.folder, s3Publisher(derivedUrlOf(EVENTS_URL, r.folder), s3)])) as Record<DerivedFolder, ReturnType<typeof s3Publisher>>,
      storedDays: s3StoredDays(EVENTS_URL, s3),
    };
    for (const events of [engineCallEvents.generated, engineCallEvents.shop]) {
      expect((await api.importEvents(events)).rejected).toEqual([]);
      expect((await importEvents(events, api.paths, toS3)).rejected).toEqual([]);
    }
    cloud = await startTrinoAthena({ bucket: { s3: { ...moto.credentials, endpoint: moto.endpoint, region: moto.region, bucket: BUCKET } }, resultReuseMinutes: 0 });
    tokens = Object.fromEntries([generatedDomain, SHOP].map((d) => [d, rotatingToken(api, { owner: 's3-path', domains: [d], scopes: ['analytics:read'] })]));
  }, 300_000);
  afterAll(async () => {
    await cloud?.close();
    await api?.close();
    await moto?.stop();
  });

  it('writes every relation in the published layout, one ZSTD file per partition and relation', async () => {
    const keys = await keysOf(s3, BUCKET);
    const folders = new Set(keys.map((k) => k.split('/')[0]));
    expect([...folders].sort()).toEqual(['events', ...derivedRelations.map((r) => r.folder)].sort());
    for (const key of keys) expect(key).toMatch(/^[a-z]+\/domain=[a-z.]+\/dt=\d{4}-\d{2}-\d{2}\/[^/]+\.parquet$/);
    const eventFiles = keys.filter((k) => k.startsWith('events/'));
    for (const r of derivedRelations) expect(keys.filter((k) => k.startsWith(`${r.folder}/`)).length).toBe(eventFiles.length);
  });

  it(`${CALLS} seeded requests over every endpoint: the Athena path over S3 answers as DuckDB does locally`, { timeout: 900_000 }, async () => {
    let bytes = 0;
    let withRows = 0;
    for (const [i, call] of engineCalls(CALLS, 77).entries()) {
      installEngine(api.engine);
      const { bytes: _local, ...local } = await sendCall(api, call, await tokens[call.domain]!());
      installEngine(cloud.engine);
      const { bytes: scanned, ...remote } = await sendCall(api, call, await tokens[call.domain]!());
      expect(remote, `call ${i}: ${call.method} ${call.path} ${JSON.stringify(call.body ?? call.query)}`).toEqual(local);
      bytes += scanned;
      const data = (local.body as { data?: unknown }).data;
      if (Array.isArray(data) && data.length > 0) withRows += 1;
    }
    installEngine(api.engine);
    console.info(`S3 import path: ${CALLS} requests, ${withRows} answers with rows, ${bytes} bytes read from S3 by Trino`);
    expect(withRows).toBeGreaterThan(CALLS / 3);
    expect(bytes).toBeGreaterThan(0);
  });
});
