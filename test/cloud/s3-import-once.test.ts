import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { derivedUrlOf, s3ImportRecords, s3Publisher, s3StoredDays } from '../../ingest/s3-store.js';
import { importEvents as importLocally, type ImportOptions } from '../../local/store/importer.js';
import { asOperator } from '../support/aws-rules/install.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { generatedEvents } from '../support/generated-sessions.js';
import { keysOf } from '../support/s3-keys.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// `npm run import -- --s3` against a real S3 implementation (moto's server): the same input imported twice, or
// retried after the process died midway (files partly uploaded; or all uploaded and counted but not recorded),
// leaves the bucket as one clean import leaves it, and counts its events once.

/** `npm run import -- --s3`: run by a person with their own credentials. */
const importEvents = (...args: Parameters<typeof importLocally>) => asOperator(() => importLocally(...args));

let moto: MotoServer;
let s3: S3Client;
let api: TestApi;
let bucketNumber = 0;

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({ endpoint: moto.endpoint, region: moto.region, credentials: moto.credentials, forcePathStyle: true });
  api = await startTestApi();
}, 180_000);
afterAll(async () => {
  await api?.close();
  await moto?.stop();
});

/** A fresh bucket and the CLI's `--s3` options for it; `failAfter` makes the event upload die after that many files. */
async function target(failures: { afterUploads?: number; atRecord?: boolean } = {}): Promise<{ bucket: string; options: ImportOptions }> {
  const bucket = `events-${++bucketNumber}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const url = `s3://${bucket}/events`;
  const upload = s3Publisher(url, s3);
  let uploads = 0;
  const records = s3ImportRecords(url, s3);
  const options: ImportOptions = {
    publish: async (dir, files) => {
      for (const file of files) {
        if (failures.afterUploads !== undefined && uploads >= failures.afterUploads) throw new Error('process died');
        await upload(dir, [file]);
        uploads += 1;
      }
    },
    publishDerived: Object.fromEntries(derivedRelations.map((r) => [r.folder, s3Publisher(derivedUrlOf(url, r.folder), s3)])) as Record<DerivedFolder, ReturnType<typeof s3Publisher>>,
    storedDays: s3StoredDays(url, s3),
    publishedImports: {
      has: records.has,
      record: async (record) => {
        if (failures.atRecord) throw new Error('process died');
        await records.record(record);
      },
    },
  };
  return { bucket, options };
}

/** The events of one domain of its own, so each case reads its own usage. */
function eventsOf(domain: string): unknown[] {
  return generatedEvents().map((e) => ({ ...(e as object), domain }));
}

describe('import --s3 is exactly once', () => {
  it('the same input twice: the second adds no file and no usage', async () => {
    const events = eventsOf('twice.test');
    const { bucket, options } = await target();
    const first = await importEvents(events, api.paths, options);
    const keys = await keysOf(s3, bucket);
    expect(first.rowsWritten).toBe(events.length);
    expect(keys.filter((k) => k.startsWith('imports/'))).toHaveLength(1);
    const second = await importEvents(events, api.paths, options);
    expect(second.alreadyImported).toBe(true);
    expect(await keysOf(s3, bucket)).toEqual(keys);
    expect(await readUsage('twice.test')).toBe(events.length);
  });

  it('died midway through the uploads, then retried: the files of one import, counted once', async () => {
    const events = eventsOf('midway.test');
    const days = new Set(events.map((e) => (e as { timestamp: string }).timestamp.slice(0, 10)));
    const dying = await target({ afterUploads: 3 });
    await expect(importEvents(events, api.paths, dying.options)).rejects.toThrow('process died');
    const visible = await keysOf(s3, dying.bucket);
    const eventFiles = visible.filter((k) => k.startsWith('events/'));
    expect(eventFiles).toHaveLength(3);
    // Every event file readers can see already has its derived files: they are uploaded first.
    for (const file of eventFiles) for (const r of derivedRelations) expect(visible).toContain(file.replace(/^events\//, `${r.folder}/`));
    expect(await readUsage('midway.test')).toBe(0);
    const retry = await importEvents(events, api.paths, { ...dying.options, publish: s3Publisher(`s3://${dying.bucket}/events`, s3) });
    expect(retry.rowsWritten).toBe(events.length);
    const keys = await keysOf(s3, dying.bucket);
    // One file per partition and relation: the three uploaded before the death were overwritten, not doubled.
    for (const folder of ['events', ...derivedRelations.map((r) => r.folder)]) {
      const partitions = keys.filter((k) => k.startsWith(`${folder}/`)).map((k) => k.split('/').slice(0, 3).join('/'));
      expect(partitions.length, folder).toBe(days.size);
      expect(new Set(partitions).size, folder).toBe(days.size);
    }
    expect(await readUsage('midway.test')).toBe(events.length);
  });

  it('died after counting, before its record: the retry rewrites the same files and counts nothing more', async () => {
    const events = eventsOf('record.test');
    const dying = await target({ atRecord: true });
    await expect(importEvents(events, api.paths, dying.options)).rejects.toThrow('process died');
    const before = await keysOf(s3, dying.bucket);
    expect(before.some((k) => k.startsWith('imports/'))).toBe(false);
    expect(await readUsage('record.test')).toBe(events.length);
    await importEvents(events, api.paths, { ...dying.options, publishedImports: s3ImportRecords(`s3://${dying.bucket}/events`, s3) });
    const after = await keysOf(s3, dying.bucket);
    expect(after.filter((k) => !k.startsWith('imports/'))).toEqual(before);
    expect(await readUsage('record.test')).toBe(events.length);
  });
});
