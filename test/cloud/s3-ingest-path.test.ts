import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ingestHandler } from '../support/deployed-functions.js';
import { UPKEEP_GRACE_MS } from '../../ingest/s3-upkeep.js';
import { upkeepStore } from '../support/deployed-functions.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { excludedFiles } from '../../shared/store/file-states-repo.js';
import { startTrinoAthena, type TrinoAthena } from '../../local/trino/trino-athena.js';
import { installEngine } from '../../shared/engines/registry.js';
import { derivedRelations } from '../../shared/events/derived-relations.js';
import { engineCallEvents, engineCalls, sendCall, SHOP, type Call } from '../support/engine-calls.js';
import { domain as generatedDomain } from '../support/generated-sessions.js';
import { rotatingToken } from '../support/rotating-token.js';
import { ingestBucket, type IngestBucket } from '../support/ingest-bucket.js';
import { keysOf } from '../support/s3-keys.js';
import { visibleMarks } from '../support/s3-store-view.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';
import { sharedTrino } from '../support/shared-trino.js';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { asOperator } from '../support/aws-rules/install.js';
import { withUploadDelay } from '../support/upload-delay.js';
import type { SqlQuery } from '../../shared/query/sql/sql.js';

// The cloud data path end to end, with the stack's own functions: producers put the events in a bucket on a real
// S3 implementation (moto's server) under `incoming/`, as NDJSON and gzip objects, eight objects per domain; S3
// announces each through an SQS queue (moto's); the ingest function imports them; the upkeep function compacts the
// crowded partitions. Trino reads the bucket through the stack's Glue tables with its S3 file system, and the
// Lambdas' Athena engine answers through the emulator, leaving out the files the domain's file states hide. Every
// answer must equal DuckDB's over the same events imported into a local store: while compaction's replaced files
// are still in the bucket (left out by each query), after upkeep deleted them, and after a later ingest extended
// sessions whose fragments upkeep had marked whole (Athena merges those: StoreCatalog.wholeMarksExact).

const OBJECTS_PER_DOMAIN = 8;
const CALLS = 100;
const CALLS_AFTER_CLEANUP = 30;
const CALLS_AFTER_EXTENDING = 30;

describe.skipIf(!trinoAvailable('S3 ingest path suite'))(
  'events ingested from incoming/ answer as the local store does',
  () => {
    let api: TestApi;
    let moto: MotoServer;
    let target: IngestBucket;
    let cloud: TrinoAthena;
    let tokens: Record<string, () => Promise<string>>;
    const work = mkdtempSync(join(tmpdir(), 's3-ingest-path-'));
    const started = Date.now();

    beforeAll(async () => {
      moto = await startMoto();
      api = await startTestApi();
      target = await ingestBucket(moto, 'events-bucket');
      for (const [name, events] of Object.entries(engineCallEvents)) {
        expect((await api.importEvents(events)).rejected).toEqual([]);
        for (let i = 0; i < OBJECTS_PER_DOMAIN; i++) {
          const lines = events
            .filter((_, j) => j % OBJECTS_PER_DOMAIN === i)
            .map((e) => JSON.stringify(e))
            .join('\n');
          await target.put(`incoming/${name}/${i}.ndjson${i % 2 ? '.gz' : ''}`, i % 2 ? gzipSync(lines) : lines);
        }
      }
      expect(await target.deliver(ingestHandler(target.s3, work), { batchSize: 4 })).toEqual([]);
      const upkeep = await upkeepStore(
        { client: target.s3, bucket: target.bucket, workDir: work },
        { now: () => started },
      );
      expect(upkeep.compacted.length).toBeGreaterThan(5);
      cloud = await startTrinoAthena({
        bucket: { s3: { ...moto.credentials, endpoint: moto.endpoint, region: moto.region, bucket: target.bucket } },
        resultReuseMinutes: 0,
        server: sharedTrino(),
      });
      tokens = Object.fromEntries(
        [generatedDomain, SHOP].map((d) => [
          d,
          rotatingToken(api, { owner: 's3-path', domains: [d], scopes: ['analytics:read'] }),
        ]),
      );
    }, 300_000);
    afterAll(async () => {
      await cloud?.close();
      await api?.close();
      await moto?.stop();
    });

    it('writes every relation in the published layout, the same files in each relation; every object moved', async () => {
      const keys = await keysOf(target.s3, target.bucket);
      // The relations' files (upkeep's fragment index, under upkeep/, is not one).
      const stored = keys.filter((k) => /^[a-z_]+\/domain=/.test(k) && !k.startsWith('upkeep/'));
      const folders = new Set(stored.map((k) => k.split('/')[0]));
      expect([...folders].sort()).toEqual(['events', ...derivedRelations.map((r) => r.folder)].sort());
      for (const key of stored) expect(key).toMatch(/^[a-z_]+\/domain=[a-z.]+\/dt=\d{4}-\d{2}-\d{2}\/[^/]+\.parquet$/);
      const eventFiles = stored.filter((k) => k.startsWith('events/')).map((k) => k.slice('events/'.length));
      for (const r of derivedRelations)
        expect(stored.filter((k) => k.startsWith(`${r.folder}/`)).map((k) => k.slice(r.folder.length + 1))).toEqual(
          eventFiles,
        );
      expect(keys.filter((k) => k.startsWith('incoming/'))).toEqual([]);
      expect(keys.filter((k) => k.startsWith('ingested/'))).toHaveLength(2 * OBJECTS_PER_DOMAIN);
    });

    const compare = async (calls: Call[]) => {
      let bytes = 0;
      let withRows = 0;
      for (const [i, call] of calls.entries()) {
        installEngine(api.engine);
        const { bytes: _local, ...local } = await sendCall(api, call, await tokens[call.domain]!());
        installEngine(cloud.engine);
        const { bytes: scanned, ...remote } = await sendCall(api, call, await tokens[call.domain]!());
        expect(remote, `call ${i}: ${call.method} ${call.path} ${JSON.stringify(call.body ?? call.query)}`).toEqual(
          local,
        );
        bytes += scanned;
        const data = (local.body as { data?: unknown }).data;
        if (Array.isArray(data) && data.length > 0) withRows += 1;
      }
      installEngine(api.engine);
      console.info(
        `S3 ingest path: ${calls.length} requests, ${withRows} answers with rows, ${bytes} bytes read from S3 by Trino`,
      );
      expect(withRows).toBeGreaterThan(calls.length / 3);
      expect(bytes).toBeGreaterThan(0);
    };

    it(
      `${CALLS} seeded requests over every endpoint while compaction's replaced files are still there: answers as DuckDB's locally`,
      { timeout: 900_000 },
      async () => {
        expect((await excludedFiles(generatedDomain)).length).toBeGreaterThan(0);
        await compare(engineCalls(CALLS, 77));
      },
    );

    it(
      `once upkeep deleted the replaced files, ${CALLS_AFTER_CLEANUP} more requests answer the same`,
      { timeout: 900_000 },
      async () => {
        const cleanup = await upkeepStore(
          { client: target.s3, bucket: target.bucket, workDir: work },
          { now: () => started + UPKEEP_GRACE_MS + 1 },
        );
        expect(cleanup.cleaned.length).toBeGreaterThan(5);
        expect(await excludedFiles(generatedDomain)).toEqual([]);
        await compare(engineCalls(CALLS_AFTER_CLEANUP, 78));
      },
    );

    it(
      `after an ingest extends sessions upkeep had marked whole, session metrics and ${CALLS_AFTER_EXTENDING} more requests answer the same`,
      { timeout: 900_000 },
      async () => {
        // A third of each domain's sessions go on: a minute later (same partition) and a day later (the next one).
        for (const [name, events] of Object.entries(engineCallEvents)) {
          const goOn = (events as Record<string, unknown>[]).filter(
            (e) =>
              e.type !== 'revenue' &&
              typeof e.session_id === 'string' &&
              [...e.session_id].reduce((n, c) => n + c.charCodeAt(0), 0) % 3 === 0,
          );
          const later = goOn.flatMap((e) =>
            [60_000, 86_400_000].map((ms) => ({
              ...e,
              timestamp: new Date(Date.parse(String(e.timestamp)) + ms).toISOString(),
            })),
          );
          expect((await api.importEvents(later)).rejected).toEqual([]);
          await target.put(`incoming/${name}/later.ndjson`, later.map((e) => JSON.stringify(e)).join('\n'));
        }
        expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
        const marks = await visibleMarks(target.s3, target.bucket, work);
        expect(marks.filter((m) => m.marked > 1)).toEqual([]);
        expect(marks.filter((m) => m.marked === 1 && m.fragments > 1).length).toBeGreaterThan(20);
        // Session metrics over every day of both domains, whole days and zones that cut them, beside the random calls.
        const sessionCalls = [generatedDomain, SHOP].flatMap((domain) =>
          ['UTC', 'America/New_York'].flatMap((timezone) =>
            [[], ['page'], ['referrer']].map((dimensions): Call => ({
              method: 'POST',
              path: '/v1/query',
              domain,
              body: {
                domain,
                metrics: ['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'],
                dimensions,
                date_range: 'all',
                timezone,
                limit: 50,
              },
            })),
          ),
        );
        await compare([...sessionCalls, ...engineCalls(CALLS_AFTER_EXTENDING, 79)]);
      },
    );

    it(
      'a query whose file states were read before an import began reads none of it, though it is uploaded meanwhile',
      { timeout: 300_000 },
      async () => {
        const token = await tokens[SHOP]!();
        const pageviews = async (metrics: string[]) => {
          const call: Call = {
            method: 'POST',
            path: '/v1/query',
            domain: SHOP,
            body: { domain: SHOP, metrics, date_range: 'all', timezone: 'UTC' },
          };
          const { status, body } = await sendCall(api, call, token);
          expect(status, JSON.stringify(body)).toBe(200);
          const value = (body as { data: { metrics: { pageviews: number } }[] }).data[0]!.metrics.pageviews;
          expect(Number.isSafeInteger(value) && value > 0, JSON.stringify(body)).toBe(true);
          return value;
        };
        installEngine(cloud.engine);
        const before = await pageviews(['pageviews']);
        // Asked again over the same data version, the answer comes from the cache (keyed without the read's time).
        const run = vi.spyOn(cloud.engine, 'run');
        try {
          expect(await pageviews(['pageviews'])).toBe(before);
          expect(run).not.toHaveBeenCalled();
        } finally {
          run.mockRestore();
        }
        installEngine(api.engine);
        expect(await pageviews(['pageviews', 'visits'])).toBe(before);
        // More pageviews in sessions already there, half a minute after each pageview.
        const added = (engineCallEvents.shop as Record<string, unknown>[])
          .filter((e) => e.type === 'pageview')
          .map((e) => ({ ...e, timestamp: new Date(Date.parse(String(e.timestamp)) + 30_000).toISOString() }));
        expect(added.length).toBeGreaterThan(5);
        // An ingest that uploads every file and dies before its record, so they stay hidden, runs after the
        // request has read the domain's file states and before its statement starts.
        const dying = new Proxy(target.s3, {
          get(client, property, receiver) {
            if (property !== 'send') return Reflect.get(client, property, receiver);
            return async (command: unknown) => {
              if (command instanceof PutObjectCommand && command.input.Key?.startsWith('imports/'))
                throw new Error('process died');
              return client.send(command as PutObjectCommand);
            };
          },
        });
        let ingest: Promise<string[]> | undefined;
        const racing = new Proxy(cloud.engine, {
          get(engine, property, receiver) {
            if (property !== 'run') return Reflect.get(engine, property, receiver);
            return async (query: SqlQuery) => {
              // Run apart from the request (its role is the query function's): a producer's put, then the ingest.
              ingest ??= asOperator(() =>
                withUploadDelay(async () => {
                  await target.put('incoming/shop/race.ndjson', added.map((e) => JSON.stringify(e)).join('\n'));
                  return target.deliver(ingestHandler(dying, work));
                }),
              );
              expect(await ingest).toHaveLength(1);
              return engine.run(query);
            };
          },
        });
        installEngine(racing);
        const during = await pageviews(['pageviews', 'visitors']);
        installEngine(cloud.engine);
        expect(ingest, 'the statement ran after the ingest').toBeDefined();
        const uploaded = (await keysOf(target.s3, target.bucket)).filter(
          (k) => k.startsWith(`events/domain=${SHOP}/`) && !k.includes('/compacted-'),
        );
        expect(uploaded.length).toBeGreaterThan(0);
        expect(during).toBe(before);
        // Retried, the import is shown: the next request reads it, as DuckDB reads the same events locally.
        expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
        const after = await pageviews(['pageviews', 'bounce_rate']);
        expect((await api.importEvents(added)).rejected).toEqual([]);
        installEngine(api.engine);
        expect(after).toBeGreaterThan(before);
        expect(await pageviews(['pageviews', 'avg_session_duration'])).toBe(after);
      },
    );
  },
);
