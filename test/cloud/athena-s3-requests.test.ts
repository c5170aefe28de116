import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { startTrinoAthena, type TrinoAthena } from '../../local/trino/trino-athena.js';
import { finishedStatements, statementReads } from '../../local/trino/trino-query-info.js';
import { installEngine } from '../../shared/engines/registry.js';
import { ingestHandler } from '../support/deployed-functions.js';
import { engineCallEvents, engineCalls, sendCall, SHOP } from '../support/engine-calls.js';
import { domain as generatedDomain } from '../support/generated-sessions.js';
import { ingestBucket, type IngestBucket } from '../support/ingest-bucket.js';
import { rotatingToken } from '../support/rotating-token.js';
import { countS3Requests, type S3RequestCounter } from '../support/s3-request-counter.js';
import { sharedTrino } from '../support/shared-trino.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// The S3 requests a statement on the Athena path makes, counted on the wire: Trino (the engine Athena runs) reads
// the events bucket on moto's S3 server through a counting front, and each statement's LIST and GET requests are
// held to what Trino's query info says it read (trino-query-info.ts). The bench's bill (bench/aws-bill.ts) prices
// a load's S3 requests from those same facts, so this is the check that its S3 line counts what S3 would bill.

const OBJECTS_PER_DOMAIN = 3;

describe.skipIf(!trinoAvailable('Athena S3 requests suite'))('S3 requests of a statement on the Athena path', () => {
  let api: TestApi;
  let moto: MotoServer;
  let target: IngestBucket;
  let counter: S3RequestCounter;
  let cloud: TrinoAthena;
  const work = mkdtempSync(join(tmpdir(), 'athena-s3-requests-'));

  beforeAll(async () => {
    moto = await startMoto();
    api = await startTestApi();
    target = await ingestBucket(moto, 'events-bucket');
    for (const [name, events] of Object.entries(engineCallEvents)) {
      for (let i = 0; i < OBJECTS_PER_DOMAIN; i++) {
        const lines = events.filter((_, j) => j % OBJECTS_PER_DOMAIN === i).map((e) => JSON.stringify(e));
        await target.put(`incoming/${name}/${i}.ndjson`, lines.join('\n'));
      }
    }
    expect(await target.deliver(ingestHandler(target.s3, work), { batchSize: 1 })).toEqual([]);
    counter = await countS3Requests(moto.endpoint);
    cloud = await startTrinoAthena({
      bucket: { s3: { ...moto.credentials, endpoint: counter.endpoint, region: moto.region, bucket: target.bucket } },
      server: sharedTrino(),
    });
  }, 300_000);
  afterAll(async () => {
    installEngine(api?.engine);
    await cloud?.close();
    await counter?.close();
    await api?.close();
    await moto?.stop();
  });

  it(
    'lists each partition a statement reads once, and gets each file it opens once (files below 3 MB)',
    { timeout: 300_000 },
    async () => {
      installEngine(cloud.engine);
      const tokens = Object.fromEntries(
        [generatedDomain, SHOP].map((d) => [
          d,
          rotatingToken(api, { owner: 's3-requests', domains: [d], scopes: ['analytics:read'] }),
        ]),
      );
      const total = { gets: 0, splits: 0, statements: 0 };
      for (const call of engineCalls(12, 5)) {
        const since = new Date();
        counter.take();
        const answer = await sendCall(api, call, await tokens[call.domain]!());
        const counted = counter.take();
        const reads = await Promise.all(
          (await finishedStatements(cloud.trino, 'athena-emulator', since)).map((id) =>
            statementReads(cloud.trino, id),
          ),
        );
        const what = `${call.path} ${JSON.stringify(call.body ?? call.query)} answered ${answer.status}`;
        const partitions = reads.reduce((sum, r) => sum + r.partitionsListed, 0);
        const splits = reads.reduce((sum, r) => sum + r.splitsRead, 0);
        expect(counted.list, what).toBe(partitions);
        // A split whose file a filter on its path or an empty join side rules out is never opened.
        expect(counted.get, what).toBeLessThanOrEqual(splits);
        expect({ head: counted.head, other: counted.other }, what).toEqual({ head: 0, other: 0 });
        // What the bench reports of each statement's time (bench/report.ts): Trino's times and its operators.
        for (const { profile, physicalInputBytes } of reads) {
          expect(profile.elapsedMs, what).toBeGreaterThanOrEqual(profile.planningMs);
          const scanned = profile.operators.filter((o) => /Scan/.test(o.type)).reduce((n, o) => n + o.inputRows, 0);
          if (physicalInputBytes > 0) expect(scanned, what).toBeGreaterThan(0);
          // A statement whose filters contradict each other is planned to no tasks and spends no CPU.
          if (scanned > 0) expect(profile.cpuMs, what).toBeGreaterThan(0);
          else expect(profile.cpuMs, what).toBeGreaterThanOrEqual(0);
        }
        total.gets += counted.get;
        total.splits += splits;
        total.statements += reads.length;
      }
      console.info(`Athena S3 requests: ${total.statements} statements, ${total.gets} GETs for ${total.splits} splits`);
      expect(total.statements).toBeGreaterThan(10);
      // Nearly every split is opened, each with one GET: the bill's count of GETs (one per split) is close, and high.
      expect(total.gets).toBeGreaterThan(0.9 * total.splits);
    },
  );
});
