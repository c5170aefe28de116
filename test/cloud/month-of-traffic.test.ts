import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPKEEP_GRACE_MS, UPKEEP_SETTLE_MS } from '../../ingest/s3-upkeep.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { startTrinoAthena, type TrinoAthena } from '../../local/trino/trino-athena.js';
import { dynamoItemBytes } from '../../shared/aws/service-limits.js';
import { tableNames } from '../../shared/config.js';
import { inlineParameters } from '../../shared/engines/athena-literals.js';
import { installEngine } from '../../shared/engines/registry.js';
import { usageKey } from '../../shared/limits/limiter.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { ingestHandler, upkeepStore } from '../support/deployed-functions.js';
import { engineCallEvents, engineCalls, sendCall, SHOP } from '../support/engine-calls.js';
import { domain as generatedDomain } from '../support/generated-sessions.js';
import { ingestBucket, type IngestBucket } from '../support/ingest-bucket.js';
import { keysOf } from '../support/s3-keys.js';
import { rotatingToken } from '../support/rotating-token.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';
import { sharedTrino } from '../support/shared-trino.js';

// A month of traffic through the deployed path, time compressed, with AWS's rules held on every call (the limits and
// each function's role: test/support/aws-rules): two domains' events, in the order they happened, arrive as one
// object an hour for 30 days (720 objects; some an hour or a day late, some put twice under a second key, a few
// broken gzip objects), each through the ingest function; upkeep runs every 6 hours on a fake clock; a few SQS
// messages that are not notifications fail every delivery. Then the store must be as the design bounds it, and
// answer as DuckDB over the same events: every partition one file per relation once upkeep has settled, usage
// items small, statements far below Athena's limit, only the poison messages dead-lettered.
//
// Firehose's own cadence, an object every 300 s with upkeep every hour (8,640 objects), is the same test with
// `MONTH_CADENCE_SECONDS=300 MONTH_UPKEEP_SECONDS=3600`: about 50 minutes here by the hourly run's 0.34 s per object
// (not run in full), so `npm test` runs the hourly one.

const CADENCE_S = Number(process.env.MONTH_CADENCE_SECONDS ?? 3600);
const UPKEEP_EVERY_S = Number(process.env.MONTH_UPKEEP_SECONDS ?? 6 * 3600);
const DAYS = Number(process.env.MONTH_DAYS ?? 30);
/** Deliveries over the month, one object each (and late, repeated and broken ones beside them). */
const SLOTS = (DAYS * 86_400) / CADENCE_S;
const UPKEEP_EVERY_SLOTS = UPKEEP_EVERY_S / CADENCE_S;
const SLOTS_PER_HOUR = Math.max(1, 3600 / CADENCE_S);
const SLOTS_PER_DAY = 86_400 / CADENCE_S;
const DAY_MS = 86_400_000;
const MAX_RECEIVES = 5;

/** Each generated event three times, 0, 10 and 20 days earlier, visitors and sessions told apart per copy. */
function monthOfEvents(): Record<string, unknown>[] {
  const copies = [0, 10, 20].flatMap((daysBack) =>
    (engineCallEvents.generated as Record<string, unknown>[]).map((e) => ({
      ...e,
      timestamp: new Date(Date.parse(String(e.timestamp)) - daysBack * DAY_MS).toISOString(),
      ...(daysBack && typeof e.visitor_id === 'string' ? { visitor_id: `${e.visitor_id}-${daysBack}` } : {}),
      ...(daysBack && typeof e.session_id === 'string' ? { session_id: `${e.session_id}-${daysBack}` } : {}),
    })),
  );
  return [...copies, ...(engineCallEvents.shop as Record<string, unknown>[])].sort((a, b) =>
    String(a.timestamp).localeCompare(String(b.timestamp)),
  );
}

describe.skipIf(!trinoAvailable('month of traffic suite'))('a month of traffic, time compressed', () => {
  let api: TestApi;
  let moto: MotoServer;
  let target: IngestBucket;
  let cloud: TrinoAthena;
  const work = mkdtempSync(join(tmpdir(), 'month-'));
  const events = monthOfEvents();
  const start = Date.now();
  let clock = start;
  const deadLettered: string[] = [];
  let maxFilesPerPartition = 0;

  beforeAll(async () => {
    moto = await startMoto();
    api = await startTestApi();
    target = await ingestBucket(moto, 'month-bucket');
    expect((await api.importEvents(events)).rejected).toEqual([]);
  }, 300_000);
  afterAll(async () => {
    await cloud?.close();
    await api?.close();
    await moto?.stop();
  });

  const eventFilesPerPartition = async () => {
    const counts = new Map<string, number>();
    for (const key of await keysOf(target.s3, target.bucket)) {
      const partition = /^events\/(domain=[^/]+\/dt=[^/]+)\//.exec(key)?.[1];
      if (partition) counts.set(partition, (counts.get(partition) ?? 0) + 1);
    }
    return counts;
  };

  it(
    `${SLOTS} objects every ${CADENCE_S} s, late and duplicate deliveries, poison, upkeep every ${UPKEEP_EVERY_S / 3600} hours: nothing lost, nothing doubled`,
    { timeout: 600_000 + SLOTS * 2_000 },
    async () => {
      const ingest = ingestHandler(target.s3, work);
      const perObject = Math.ceil(events.length / SLOTS);
      const late: { at: number; key: string; body: string | Uint8Array }[] = [];
      for (let slot = 0; slot < SLOTS; slot++) {
        clock = start + slot * CADENCE_S * 1000;
        const lines = events
          .slice(slot * perObject, (slot + 1) * perObject)
          .map((e) => JSON.stringify(e))
          .join('\n');
        const key = `incoming/2026/${String(slot).padStart(4, '0')}.ndjson${slot % 3 === 0 ? '.gz' : ''}`;
        const body = slot % 3 === 0 ? gzipSync(lines) : lines;
        // One object in 40 a day late, one in 25 an hour late; one in 50 put twice (a producer's retry).
        if (slot % 40 === 7 && slot + SLOTS_PER_DAY < SLOTS) late.push({ at: slot + SLOTS_PER_DAY, key, body });
        else if (slot % 25 === 3 && slot + SLOTS_PER_HOUR < SLOTS) late.push({ at: slot + SLOTS_PER_HOUR, key, body });
        else await target.put(key, body);
        if (slot % 50 === 11) await target.put(key.replace('.ndjson', '-again.ndjson'), body);
        if (slot % 240 === 100) await target.put(`incoming/2026/broken-${slot}.gz`, gzipSync(lines).subarray(0, 40));
        for (const due of late.filter((l) => l.at === slot)) await target.put(due.key, due.body);
        expect(await target.deliver(ingest), `slot ${slot}`).toEqual([]);
        if (slot % 240 === 200) {
          // A message that is not an S3 notification fails every delivery, then the queue dead-letters it.
          const poison: SQSEvent = {
            Records: [
              {
                messageId: `poison-${slot}`,
                receiptHandle: 'r',
                body: '{"not":"a notification"}',
                attributes: {} as never,
                messageAttributes: {},
                md5OfBody: '',
                eventSource: 'aws:sqs',
                eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:q',
                awsRegion: 'us-east-1',
              },
            ],
          };
          let failures = 0;
          for (let i = 0; i < MAX_RECEIVES; i++) failures += (await ingest(poison)).batchItemFailures.length;
          if (failures === MAX_RECEIVES) deadLettered.push(`poison-${slot}`);
        }
        if (slot % UPKEEP_EVERY_SLOTS === UPKEEP_EVERY_SLOTS - 1) {
          const report = await upkeepStore(
            { client: target.s3, bucket: target.bucket, workDir: work },
            { now: () => clock },
          );
          expect(report.busy).toBeUndefined();
          maxFilesPerPartition = Math.max(maxFilesPerPartition, ...(await eventFilesPerPartition()).values());
        }
      }
      expect(late.every((l) => l.at < SLOTS)).toBe(true);
      // Upkeep goes on after the month until nothing is left to do: every replaced file deleted, every partition settled.
      for (let i = 0; i < 4; i++) {
        clock += UPKEEP_GRACE_MS + UPKEEP_SETTLE_MS + 1;
        await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => clock });
      }
      const keys = await keysOf(target.s3, target.bucket);
      expect(keys.filter((k) => k.startsWith('incoming/'))).toEqual([]);
      const every240 = (offset: number) =>
        Array.from({ length: SLOTS }, (_, slot) => slot).filter((slot) => slot % 240 === offset);
      expect(keys.filter((k) => k.startsWith('rejected/'))).toEqual(
        every240(100).map((slot) => `rejected/2026/broken-${slot}.gz`),
      );
      expect(deadLettered).toEqual(every240(200).map((slot) => `poison-${slot}`));
      expect(deadLettered.length).toBeGreaterThan(0);
      // The bound: one file per partition and relation once upkeep has settled; between runs, the ingests since the last run beside it.
      const files = await eventFilesPerPartition();
      expect([...files.values()].filter((n) => n !== 1)).toEqual([]);
      console.info(
        `month of traffic: ${files.size} partitions, at most ${maxFilesPerPartition} event files in one partition after an upkeep run`,
      );
      expect(maxFilesPerPartition).toBeLessThanOrEqual(UPKEEP_EVERY_SLOTS + 8);
      for (const domain of [generatedDomain, SHOP]) {
        const { Item } = await documentClient().send(
          new GetItemCommand({
            TableName: tableNames().counters,
            Key: { pk: { S: usageKey(domain) } },
            ConsistentRead: true,
          }),
        );
        expect(dynamoItemBytes(Item!), `usage item of ${domain}`).toBeLessThan(4096);
      }
    },
  );

  it(
    "answers 40 seeded requests as DuckDB over the same events; the longest statement far below Athena's limit",
    { timeout: 900_000 },
    async () => {
      cloud = await startTrinoAthena({
        bucket: { s3: { ...moto.credentials, endpoint: moto.endpoint, region: moto.region, bucket: target.bucket } },
        resultReuseMinutes: 0,
        server: sharedTrino(),
      });
      let longest = 0;
      const run = cloud.engine.run.bind(cloud.engine);
      cloud.engine.run = (query) => {
        longest = Math.max(longest, Buffer.byteLength(inlineParameters(query.sql, query.params)));
        return run(query);
      };
      const tokens = Object.fromEntries(
        [generatedDomain, SHOP].map((d) => [
          d,
          rotatingToken(api, { owner: 'month', domains: [d], scopes: ['analytics:read'] }),
        ]),
      );
      for (const [i, call] of engineCalls(40, 91).entries()) {
        installEngine(api.engine);
        const { bytes: _l, ...local } = await sendCall(api, call, await tokens[call.domain]!());
        installEngine(cloud.engine);
        const { bytes: _r, ...remote } = await sendCall(api, call, await tokens[call.domain]!());
        expect(remote, `call ${i}: ${call.method} ${call.path} ${JSON.stringify(call.body ?? call.query)}`).toEqual(
          local,
        );
      }
      installEngine(api.engine);
      console.info(`month of traffic: longest statement ${longest} bytes`);
      expect(longest).toBeGreaterThan(0);
      expect(longest).toBeLessThan(64 * 1024);
    },
  );
});
