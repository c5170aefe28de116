import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { forgetLayout } from '../support/forget-layout.js';
import { excludedFiles } from '../../shared/store/file-states-repo.js';
import { crashingWrites, readRows, visibleRows } from '../support/s3-store-view.js';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync, createGzip } from 'node:zlib';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { ingestHandler } from '../support/deployed-functions.js';
import { asFunction } from '../support/aws-rules/install.js';
import { ingestObject } from '../../ingest/ingest-object.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { importEvents } from '../../local/store/local-destination.js';
import { localPaths } from '../../local/store/paths.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { generatedEvents } from '../support/generated-sessions.js';
import { cloudParts } from '../support/cloud-parts.js';
import { ingestBucket, type IngestBucket } from '../support/ingest-bucket.js';
import { keysOf } from '../support/s3-keys.js';
import { largePayments } from '../support/large-payments.js';

// The ingest function against real parts: objects put in a bucket on moto's S3 server, announced by S3 to an SQS
// queue on the same server, handed to the handler as Lambda's SQS event; usage and domain days in dynalite.
// Exactly once under duplicate and concurrent deliveries and a crash at every write; poison objects rejected with
// their reasons while the good rows around them land.

const parts = cloudParts();
const work = mkdtempSync(join(tmpdir(), 'ingest-test-'));

const handlerFor = (client: S3Client) => ingestHandler(client, work);

/** The generated sessions under a domain of their own, so each case reads its own usage. */
function eventsOf(domain: string): Record<string, unknown>[] {
  return generatedEvents().map((e) => ({ ...(e as object), domain }));
}
const ndjson = (events: unknown[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

/** The rows of one relation in the bucket as queries read them. */
const rowsOf = (target: IngestBucket, folder: string) => visibleRows(target.s3, target.bucket, folder, work);

/**
 * What readers of the bucket see: every key (the store's files, reports, moved objects; import records by name) and
 * the rows of every relation. (Not the bytes: Parquet files of equal rows may differ in row order within a group.)
 */
async function storeState(
  target: IngestBucket,
): Promise<{ keys: string[]; rows: Record<string, string[]>; reports: string[] }> {
  const keys = (await keysOf(target.s3, target.bucket)).filter((k) => !k.startsWith('incoming/'));
  const rows: Record<string, string[]> = {};
  for (const folder of ['events', ...derivedRelations.map((r) => r.folder)])
    rows[folder] = await rowsOf(target, folder);
  const reports = await Promise.all(keys.filter((k) => k.startsWith('reports/')).map((k) => text(target, k)));
  return { keys, rows, reports };
}

describe('ingest: objects under incoming/ become the store', () => {
  it('NDJSON, gzip and Parquet objects: every valid row once, every rejected line reported by number, every object moved', async () => {
    const target = await ingestBucket(parts.moto);
    const events = eventsOf('formats.test');
    const thirds = [events.slice(0, 300), events.slice(300, 600), events.slice(600)];
    const bad = ['{"not json', JSON.stringify({ ...thirds[0]![0]!, domain: 'Not A Domain' })];
    const plain = [
      ...thirds[0]!.slice(0, 100).map((e) => JSON.stringify(e)),
      ...bad,
      ...thirds[0]!.slice(100).map((e) => JSON.stringify(e)),
    ].join('\n');
    await target.put('incoming/2026/11/25/plain.ndjson', plain);
    await target.put('incoming/2026/11/25/firehose-1', gzipSync(ndjson(thirds[1]!)));
    await target.put('incoming/2026/11/25/events.parquet', await parquetOf(thirds[2]!));
    expect(await target.deliver(handlerFor(target.s3))).toEqual([]);

    const keys = await keysOf(target.s3, target.bucket);
    expect(keys.filter((k) => k.startsWith('incoming/'))).toEqual([]);
    expect(keys.filter((k) => k.startsWith('ingested/'))).toEqual([
      'ingested/2026/11/25/events.parquet',
      'ingested/2026/11/25/firehose-1',
      'ingested/2026/11/25/plain.ndjson',
    ]);
    const report = JSON.parse(await text(target, 'reports/2026/11/25/plain.ndjson.json'));
    expect(report.rowsAccepted).toBe(thirds[0]!.length);
    expect(report.rejected.map((r: { line: number }) => r.line)).toEqual([101, 102]);
    expect(report.rejected[0].reason).toMatch(/not valid JSON/);
    expect(report.rejected[1].reason).toMatch(/domain "Not A Domain"/);
    expect(keys.filter((k) => k.startsWith('rejected/') || k.startsWith('reports/'))).toEqual([
      'reports/2026/11/25/plain.ndjson.json',
    ]);

    // The bucket holds what a local import of the same valid events holds, relation by relation.
    const local = await localRows(...thirds);
    for (const folder of ['events', ...derivedRelations.map((r) => r.folder)])
      expect(await rowsOf(target, folder), folder).toEqual(local[folder]);
    expect(await readUsage('formats.test')).toBe(events.length);
  });

  it('a notification delivered twice, and the same object put again under a second key: counted once, written once', async () => {
    const target = await ingestBucket(parts.moto);
    const events = eventsOf('twice.test');
    await target.put('incoming/a.ndjson', ndjson(events));
    expect(await target.deliver(handlerFor(target.s3), { twice: true })).toEqual([]);
    const once = await storeState(target);
    await target.put('incoming/copy-of-a.ndjson', ndjson(events));
    expect(await target.deliver(handlerFor(target.s3))).toEqual([]);
    const after = await storeState(target);
    expect(after.rows).toEqual(once.rows);
    expect(after.keys.filter((k) => !k.startsWith('ingested/'))).toEqual(
      once.keys.filter((k) => !k.startsWith('ingested/')),
    );
    expect(await readUsage('twice.test')).toBe(events.length);
  });

  it('two objects with rows in the same partitions, ingested at the same time: both land whole', async () => {
    const target = await ingestBucket(parts.moto);
    const events = eventsOf('together.test');
    const odd = events.filter((_, i) => i % 2 === 1);
    const even = events.filter((_, i) => i % 2 === 0);
    await target.put('incoming/odd.ndjson', ndjson(odd));
    await target.put('incoming/even.ndjson', ndjson(even));
    const records = (await target.receive()).filter((r) => r.body.includes('ObjectCreated'));
    expect(records).toHaveLength(2);
    const handle = handlerFor(target.s3);
    const results = await Promise.all(records.map((r) => handle({ Records: [r] })));
    expect(results.flatMap((r) => r.batchItemFailures)).toEqual([]);
    expect(await rowsOf(target, 'events')).toEqual((await localRows(odd, even)).events);
    expect(await readUsage('together.test')).toBe(events.length);
  });

  it(
    'a crash after every write of the ingest, then the redelivery: the state of one clean run, usage counted once',
    { timeout: 600_000 },
    async () => {
      // Two days of rows: a dozen writes, each one a crash point.
      const events = eventsOf('crash.test').filter((e) => /^2026-03-0[12]/.test(e.timestamp as string));
      const body = gzipSync(ndjson([...events, { type: 'nope' }]));
      const reference = await ingestBucket(parts.moto);
      await reference.put('incoming/batch.ndjson.gz', body);
      const writes = crashingWrites(parts.moto);
      expect(await reference.deliver(ingestHandler(writes.client, work))).toEqual([]);
      writes.disarm();
      const clean = await storeState(reference);
      expect(writes.count()).toBeGreaterThan(8);
      console.info(`ingest crash test: ${writes.count()} writes to S3 and DynamoDB, a crash after each`);
      for (let crashAt = 0; crashAt < writes.count(); crashAt++) {
        // Each bucket is a store of its own: the same object counts once in each, and the domain is new to it
        // (its layout unrecorded, as before the reference run, which recorded it: the same writes each time).
        const usageBefore = await readUsage('crash.test');
        await forgetLayout('crash.test');
        const target = await ingestBucket(parts.moto);
        await target.put('incoming/batch.ndjson.gz', body);
        const dying = crashingWrites(parts.moto, crashAt);
        expect(await target.deliver(ingestHandler(dying.client, work)), `crash at write ${crashAt}`).toHaveLength(1);
        dying.disarm();
        // Between the crash and the redelivery, queries see the whole import in every relation or none of it.
        const between = await storeState(target);
        const seen = Object.entries(between.rows).map(([folder, rows]) =>
          rows.length === 0
            ? 'none'
            : JSON.stringify(rows) === JSON.stringify(clean.rows[folder])
              ? 'all'
              : `part of ${folder}`,
        );
        expect(new Set(seen).size, `after a crash at write ${crashAt}: ${seen.join(', ')}`).toBe(1);
        expect(seen[0]).not.toMatch(/^part/);
        expect(await target.deliver(handlerFor(target.s3)), `redelivery after a crash at write ${crashAt}`).toEqual([]);
        expect(await storeState(target), `after a crash at write ${crashAt}`).toEqual(clean);
        expect((await readUsage('crash.test')) - usageBefore, `usage after a crash at write ${crashAt}`).toBe(
          events.length,
        );
      }
      // Nothing is left hidden.
      expect(await excludedFiles('crash.test')).toEqual([]);
    },
  );

  it('Parquet: a row with an infinite or far-future timestamp is rejected by number; properties as a MAP are read', async () => {
    const target = await ingestBucket(parts.moto);
    const dir = mkdtempSync(join(work, 'parquet-edge-'));
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const row = (ts: string, props: string) =>
      `SELECT 'edges.test' AS domain, ${ts} AS "timestamp", 'event' AS type, 'v1' AS visitor_id, 's1' AS session_id, '/' AS url_path, 'signup' AS event_name, ${props} AS event_properties`;
    await connection.run(
      `COPY (${[
        row("TIMESTAMP '2026-03-01 10:00:00'", "MAP {'plan': 'pro'}"),
        row("'infinity'::TIMESTAMP", "MAP {'plan': 'pro'}"),
        row("TIMESTAMP '2026-03-01 10:00:01'", "MAP {'plan': 'team', 'seats': '5'}"),
        row("TIMESTAMP '294000-01-01 00:00:00'", "MAP {'plan': 'pro'}"),
        row("TIMESTAMP '2026-03-01 10:00:02'", 'MAP {}::MAP(VARCHAR, VARCHAR)'),
      ].join(' UNION ALL ')}) TO '${dir}/edges.parquet' (FORMAT parquet)`,
    );
    connection.closeSync();
    instance.closeSync();
    await target.put('incoming/edges.parquet', await readFile(join(dir, 'edges.parquet')));
    expect(await target.deliver(handlerFor(target.s3))).toEqual([]);
    const report = JSON.parse(await text(target, 'reports/edges.parquet.json'));
    expect(report.rowsAccepted).toBe(3);
    expect(report.rejected.map((r: { line: number }) => r.line)).toEqual([2, 4]);
    expect((await keysOf(target.s3, target.bucket)).filter((k) => /^(incoming|ingested|rejected)\//.test(k))).toEqual([
      'ingested/edges.parquet',
    ]);
    const rows = await visibleRows(target.s3, target.bucket, 'events', work);
    expect(rows.map((r) => (JSON.parse(r) as { event_properties: string }).event_properties).sort()).toEqual(
      ['{"plan":"pro"}', '{"plan":"team","seats":"5"}', '{}'].sort(),
    );
  });

  it('Parquet: a property number a double cannot keep is rejected by row, from a MAP, a STRUCT or JSON text', async () => {
    const target = await ingestBucket(parts.moto);
    const dir = mkdtempSync(join(work, 'parquet-numbers-'));
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const row = (i: number, props: string) =>
      `SELECT 'numbers.test' AS domain, TIMESTAMP '2026-03-01 10:00:00' + INTERVAL ${i} SECOND AS ` +
      `"timestamp", 'event' AS type, 'v1' AS visitor_id, 's1' AS session_id, '/' AS url_path, 'signup' AS ` +
      `event_name, ${props} AS event_properties`;
    const objects = {
      'map.parquet': [row(1, "MAP {'n': 9007199254740993}"), row(2, "MAP {'n': 42}")],
      'struct.parquet': [row(3, "{'n': 12345678901234567891::DECIMAL(38, 0)}"), row(4, "{'n': 7::DECIMAL(38, 0)}")],
      'text.parquet': [row(5, `'{"n": 12345678901234567891}'`), row(6, `'{"n": 1.50, "x": 0.1}'`)],
    };
    for (const [name, rows] of Object.entries(objects)) {
      await connection.run(`COPY (${rows.join(' UNION ALL ')}) TO '${dir}/${name}' (FORMAT parquet)`);
      await target.put(`incoming/${name}`, await readFile(join(dir, name)));
    }
    connection.closeSync();
    instance.closeSync();
    expect(await target.deliver(handlerFor(target.s3))).toEqual([]);
    for (const name of Object.keys(objects)) {
      const report = JSON.parse(await text(target, `reports/${name}.json`));
      expect(report.rowsAccepted, name).toBe(1);
      expect(report.rejected, name).toEqual([{ line: 1, reason: expect.stringMatching(/event_properties\.n/) }]);
    }
    const rows = await visibleRows(target.s3, target.bucket, 'events', work);
    expect(rows.map((r) => (JSON.parse(r) as { event_properties: string }).event_properties).sort()).toEqual(
      ['{"n":"42"}', '{"n":"7"}', '{"n":"1.5","x":"0.1"}'].sort(),
    );
  });

  it("keeps each object's report apart whatever the names: X.report.json is an object like any other", async () => {
    const target = await ingestBucket(parts.moto);
    const events = eventsOf('names.test').slice(0, 5);
    // One object with a bad line (a report), one named as that report used to be, unreadable (moved to rejected/).
    await target.put('incoming/x.ndjson', `${ndjson(events)}not json\n`);
    await target.put('incoming/x.ndjson.report.json', gzipSync(ndjson(events)).subarray(0, 30));
    expect(await target.deliver(handlerFor(target.s3))).toEqual([]);
    const keys = await keysOf(target.s3, target.bucket);
    expect(keys.filter((k) => /^(incoming|ingested|rejected|reports)\//.test(k))).toEqual([
      'ingested/x.ndjson',
      'rejected/x.ndjson.report.json',
      'reports/x.ndjson.json',
      'reports/x.ndjson.report.json.json',
    ]);
    expect(JSON.parse(await text(target, 'reports/x.ndjson.json'))).toMatchObject({
      source: 'incoming/x.ndjson',
      rowsAccepted: 5,
      rejected: [{ line: 6 }],
    });
    expect(JSON.parse(await text(target, 'reports/x.ndjson.report.json.json')).error).toMatch(/gzip/);
  });

  it(
    'poison: a broken gzip is moved to rejected/ with its reason; a 1 GiB line is rejected by number and the rows around it land',
    { timeout: 300_000 },
    async () => {
      const target = await ingestBucket(parts.moto);
      const events = eventsOf('poison.test').slice(0, 50);
      await target.put('incoming/broken.gz', gzipSync(ndjson(events)).subarray(0, 200));
      await target.put(
        'incoming/long-line.gz',
        await gzipOf([ndjson(events.slice(0, 20)), { repeat: 'a', bytes: 1024 ** 3 }, '\n', ndjson(events.slice(20))]),
      );
      expect(await target.deliver(handlerFor(target.s3))).toEqual([]);
      const keys = await keysOf(target.s3, target.bucket);
      expect(keys.filter((k) => /^(incoming|ingested|rejected|reports)\//.test(k))).toEqual([
        'ingested/long-line.gz',
        'rejected/broken.gz',
        'reports/broken.gz.json',
        'reports/long-line.gz.json',
      ]);
      expect(JSON.parse(await text(target, 'reports/broken.gz.json')).error).toMatch(/not a readable gzip object/);
      const long = JSON.parse(await text(target, 'reports/long-line.gz.json'));
      expect(long.rejected).toEqual([{ line: 21, reason: 'line longer than 1048576 bytes' }]);
      expect(long.rowsAccepted).toBe(50);
      expect(await readUsage('poison.test')).toBe(50);
    },
  );

  it("an object whose one visitor's revenue in a day leaves the 64-bit range is rejected whole, nothing of it written", async () => {
    const target = await ingestBucket(parts.moto);
    const payments = largePayments({ domain: 'whale.test', day: '2026-03-05', count: 1100 });
    await target.put('incoming/whale.ndjson', ndjson(payments));
    expect(await target.deliver(handlerFor(target.s3))).toEqual([]);
    const keys = await keysOf(target.s3, target.bucket);
    expect(keys.filter((k) => !/^(rejected|reports)\//.test(k))).toEqual([]);
    expect(JSON.parse(await text(target, 'reports/whale.ndjson.json')).error).toMatch(
      /revenue past the 64-bit range for visitor w on 2026-03-05/,
    );
    expect(await readUsage('whale.test')).toBe(0);
  });

  it('an object too large to import is rejected; one too large for a single CopyObject stays under incoming/ with its report', async () => {
    const target = await ingestBucket(parts.moto);
    const body = ndjson(generatedEvents().slice(0, 20));
    await target.put('incoming/large.ndjson', body);
    await target.put('incoming/huge.ndjson', body + body);
    const limits = { maxObjectBytes: body.length - 1, copyMaxBytes: body.length + 1 };
    const ingest = (key: string) =>
      asFunction('Ingest', () =>
        ingestObject(key, { client: target.s3, bucket: target.bucket, workDir: work, limits }),
      );
    expect(await ingest('incoming/large.ndjson')).toMatchObject({ outcome: 'rejected' });
    expect(await ingest('incoming/huge.ndjson')).toMatchObject({ outcome: 'rejected' });
    const keys = await keysOf(target.s3, target.bucket);
    expect(keys.filter((k) => !k.startsWith('reports/')).sort()).toEqual([
      'incoming/huge.ndjson',
      'rejected/large.ndjson',
    ]);
    const report = JSON.parse(
      await (
        await target.s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: 'reports/huge.ndjson.json' }))
      ).Body!.transformToString(),
    );
    expect(report.error).toMatch(/left under incoming\//);
  });

  it('removes the work folders an invocation that timed out left in /tmp, and none another may be using', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stale-work-'));
    const old = join(dir, 'ingest-0123abcd');
    const young = join(dir, 'ingest-4567cdef');
    for (const folder of [old, young]) mkdirSync(join(folder, 'store'), { recursive: true });
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, hourAgo, hourAgo);
    const target = await ingestBucket(parts.moto);
    await target.put('incoming/one.ndjson', ndjson(generatedEvents().slice(0, 5)));
    expect(await target.deliver(ingestHandler(target.s3, dir))).toEqual([]);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
  });

  it('a message that is not an S3 notification fails alone, so the queue retries it and then dead-letters it', async () => {
    const target = await ingestBucket(parts.moto);
    await target.put('incoming/fine.ndjson', ndjson(eventsOf('alone.test').slice(0, 10)));
    const record = (await target.receive()).find((r) => r.body.includes('ObjectCreated'));
    const handle = handlerFor(target.s3);
    const result = await handle({ Records: [{ ...record!, messageId: 'garbage', body: 'not json at all' }, record!] });
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'garbage' }]);
    expect(await readUsage('alone.test')).toBe(10);
  });
});

async function text(target: IngestBucket, key: string): Promise<string> {
  return (await target.s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }))).Body!.transformToString();
}

/**
 * The same events imported into a fresh local store, one import per batch as the objects were: each relation's
 * rows as rowsOf reads them (a session in two objects is two fragments in both stores).
 */
async function localRows(...batches: Record<string, unknown>[][]): Promise<Record<string, string[]>> {
  const paths = localPaths(mkdtempSync(join(work, 'local-')));
  // Under a domain of its own, so the local import's usage is not the bucket's (files hold no domain column).
  for (const events of batches)
    expect(
      (
        await importEvents(
          events.map((e) => ({ ...e, domain: 'local-twin.test' })),
          paths,
        )
      ).rejected,
    ).toEqual([]);
  {
    const out: Record<string, string[]> = {};
    for (const folder of ['events', ...derivedRelations.map((r) => r.folder)]) {
      const dir = folder === 'events' ? paths.eventsDir : paths.derivedDirs[folder as DerivedFolder];
      out[folder] = await readRows(`'${dir}/*/*/*.parquet'`);
    }
    return out;
  }
}

/** Events as an event-format Parquet file: import-format columns, `timestamp` a TIMESTAMPTZ, properties JSON text. */
async function parquetOf(events: unknown[]): Promise<Uint8Array> {
  const dir = mkdtempSync(join(work, 'parquet-'));
  writeFileSync(join(dir, 'in.ndjson'), ndjson(events));
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  await connection.run(
    `COPY (SELECT * REPLACE (CAST("timestamp" AS TIMESTAMPTZ) AS "timestamp") FROM read_json('${dir}/in.ndjson', format = 'newline_delimited', columns = {
      domain: 'VARCHAR', "timestamp": 'VARCHAR', type: 'VARCHAR', visitor_id: 'VARCHAR', session_id: 'VARCHAR', url_path: 'VARCHAR', referrer: 'VARCHAR',
      utm_source: 'VARCHAR', utm_medium: 'VARCHAR', utm_campaign: 'VARCHAR', utm_content: 'VARCHAR', utm_term: 'VARCHAR', country: 'VARCHAR', region: 'VARCHAR',
      city: 'VARCHAR', browser: 'VARCHAR', os: 'VARCHAR', device: 'VARCHAR', scroll_depth: 'DOUBLE', event_name: 'VARCHAR', event_properties: 'JSON',
      transaction_id: 'VARCHAR', currency: 'VARCHAR', revenue_event: 'VARCHAR', amount_cents: 'BIGINT', is_dev: 'BOOLEAN'})) TO '${dir}/out.parquet' (FORMAT parquet)`,
  );
  connection.closeSync();
  instance.closeSync();
  return readFile(join(dir, 'out.parquet'));
}

/** gzip of text parts and long runs of one character, streamed (a 1 GiB run is never held in memory). */
async function gzipOf(parts: (string | { repeat: string; bytes: number })[]): Promise<Buffer> {
  async function* source() {
    for (const part of parts) {
      if (typeof part === 'string') yield Buffer.from(part);
      else {
        const block = Buffer.alloc(1 << 20, part.repeat);
        for (let left = part.bytes; left > 0; left -= block.length)
          yield left >= block.length ? block : block.subarray(0, left);
      }
    }
  }
  const chunks: Buffer[] = [];
  for await (const chunk of Readable.from(source()).pipe(createGzip({ level: 1 }))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
