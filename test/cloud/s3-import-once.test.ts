import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { s3Destination } from '../../ingest/s3-store.js';
import { importEvents as importTo } from '../../writer/importer.js';
import type { ImportDestination } from '../../writer/destination.js';
import { asOperator } from '../support/aws-rules/install.js';
import { startMoto, type MotoServer } from '../../local/tools/moto-server.js';
import { derivedRelations } from '../../shared/events/derived-relations.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { uploadDelayMs } from '../../shared/store/file-states-repo.js';
import { documentClient } from '../../shared/store/dynamo-client.js';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { withUploadDelay } from '../support/upload-delay.js';
import { generatedEvents } from '../support/generated-sessions.js';
import { keysOf } from '../support/s3-keys.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// `npm run import -- --s3` against a real S3 implementation (moto's server): the same input imported twice, or
// retried after the process died midway (files partly uploaded; or all uploaded and counted but not recorded),
// leaves the bucket as one clean import leaves it, and counts its events once. No file goes up before the wait after
// the hide write that lets a reader date the files it lists (shared/store/file-states-repo.ts).

/** `npm run import -- --s3`: run by a person with their own credentials. */
const importEvents = (...args: Parameters<typeof importTo>) => asOperator(() => importTo(...args));

let moto: MotoServer;
let s3: S3Client;
let api: TestApi;
let bucketNumber = 0;

beforeAll(async () => {
  moto = await startMoto();
  s3 = new S3Client({
    endpoint: moto.endpoint,
    region: moto.region,
    credentials: moto.credentials,
    forcePathStyle: true,
  });
  api = await startTestApi();
}, 180_000);
afterAll(async () => {
  await api?.close();
  await moto?.stop();
});

/**
 * A fresh bucket and the CLI's `--s3` destination for it, through a client that dies (throws) at the upload of the
 * event file after `afterUploads` of them, or at the import's record with `atRecord`.
 */
async function target(
  failures: { afterUploads?: number; atRecord?: boolean } = {},
): Promise<{ bucket: string; destination: ImportDestination }> {
  const bucket = `events-${++bucketNumber}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  let uploads = 0;
  const dying = new Proxy(s3, {
    get(client, property, receiver) {
      if (property !== 'send') return Reflect.get(client, property, receiver);
      return async (command: unknown) => {
        const key = command instanceof PutObjectCommand ? (command.input.Key ?? '') : '';
        if (key.startsWith('events/')) {
          if (failures.afterUploads !== undefined && uploads >= failures.afterUploads) throw new Error('process died');
          uploads += 1;
        }
        if (key.startsWith('imports/') && failures.atRecord) throw new Error('process died');
        return client.send(command as PutObjectCommand);
      };
    },
  });
  return { bucket, destination: s3Destination(`s3://${bucket}/events`, api.paths.stagingDir, dying) };
}

/** The same bucket's destination without failures: the retry of a process that died. */
const retried = (bucket: string) => s3Destination(`s3://${bucket}/events`, api.paths.stagingDir, s3);

/** The events of one domain of its own, so each case reads its own usage. */
function eventsOf(domain: string): unknown[] {
  return generatedEvents().map((e) => ({ ...(e as object), domain }));
}

describe('import --s3 is exactly once', () => {
  it('uploads no file before uploadDelayMs has passed since its hide writes, so readers can date what they list', async () => {
    const bucket = `events-${++bucketNumber}`;
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const uploads: { key: string; at: number }[] = [];
    const watched = new Proxy(s3, {
      get(client, property, receiver) {
        if (property !== 'send') return Reflect.get(client, property, receiver);
        return async (command: unknown) => {
          const key = command instanceof PutObjectCommand ? (command.input.Key ?? '') : '';
          if (/^[a-z_]+\/domain=/.test(key)) uploads.push({ key, at: Date.now() });
          return client.send(command as PutObjectCommand);
        };
      },
    });
    // When each write that hides files has returned.
    const hidden: number[] = [];
    const dynamo = documentClient();
    const send = dynamo.send.bind(dynamo) as (command: unknown) => Promise<unknown>;
    const spy = vi.spyOn(dynamo, 'send').mockImplementation((async (command: unknown) => {
      const out = await send(command);
      if (command instanceof UpdateCommand && /SET pending\./.test(command.input.UpdateExpression ?? ''))
        hidden.push(Date.now());
      return out;
    }) as typeof dynamo.send);
    try {
      const events = [...eventsOf('delayed-a.test').slice(0, 100), ...eventsOf('delayed-b.test').slice(0, 100)];
      await withUploadDelay(() =>
        importEvents(events, s3Destination(`s3://${bucket}/events`, api.paths.stagingDir, watched)),
      );
    } finally {
      spy.mockRestore();
    }
    // In AWS 3.5 s (clocks off by at most 0.5 s); here, on one clock, the read's time and S3's whole second.
    expect(uploadDelayMs({})).toBe(3500);
    expect(() => uploadDelayMs({ STORE_CLOCK_SKEW_MS: '-1' })).toThrow('STORE_CLOCK_SKEW_MS');
    expect(uploadDelayMs({ STORE_CLOCK_SKEW_MS: '0' })).toBe(1500);
    expect(hidden.length, 'one hide write per domain').toBe(2);
    expect(new Set(uploads.map((u) => u.key.split('/')[1])).size).toBe(2);
    const first = Math.min(...uploads.map((u) => u.at));
    expect(first - Math.max(...hidden)).toBeGreaterThanOrEqual(1500);
  });

  it('the same input twice: the second adds no file and no usage', async () => {
    const events = eventsOf('twice.test');
    const { bucket, destination } = await target();
    const first = await importEvents(events, destination);
    const keys = await keysOf(s3, bucket);
    expect(first.rowsWritten).toBe(events.length);
    expect(keys.filter((k) => k.startsWith('imports/'))).toHaveLength(1);
    const second = await importEvents(events, destination);
    expect(second.alreadyImported).toBe(true);
    expect(await keysOf(s3, bucket)).toEqual(keys);
    expect(await readUsage('twice.test')).toBe(events.length);
  });

  it('died midway through the uploads, then retried: the files of one import, counted once', async () => {
    const events = eventsOf('midway.test');
    const days = new Set(events.map((e) => (e as { timestamp: string }).timestamp.slice(0, 10)));
    const dying = await target({ afterUploads: 3 });
    await expect(importEvents(events, dying.destination)).rejects.toThrow('process died');
    const visible = await keysOf(s3, dying.bucket);
    const eventFiles = visible.filter((k) => k.startsWith('events/'));
    expect(eventFiles).toHaveLength(3);
    // Every event file readers can see already has its derived files: they are uploaded first.
    for (const file of eventFiles)
      for (const r of derivedRelations) expect(visible).toContain(file.replace(/^events\//, `${r.folder}/`));
    expect(await readUsage('midway.test')).toBe(0);
    const retry = await importEvents(events, retried(dying.bucket));
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
    await expect(importEvents(events, dying.destination)).rejects.toThrow('process died');
    const before = await keysOf(s3, dying.bucket);
    expect(before.some((k) => k.startsWith('imports/'))).toBe(false);
    expect(await readUsage('record.test')).toBe(events.length);
    await importEvents(events, retried(dying.bucket));
    const after = await keysOf(s3, dying.bucket);
    expect(after.filter((k) => !k.startsWith('imports/'))).toEqual(before);
    expect(await readUsage('record.test')).toBe(events.length);
  });
});
