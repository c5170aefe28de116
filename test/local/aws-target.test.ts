import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAwsTables } from '../../cli/aws-target.js';
import { parseS3Url, s3Publisher, s3StoredDays } from '../../ingest/s3-store.js';
import { runCli } from '../support/run-cli.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The local commands pointed at a deployed stack: keys in the stack's table, events uploaded to its bucket.

describe('S3 upload of an import', () => {
  it('parses s3://bucket/prefix', () => {
    expect(parseS3Url('s3://my-bucket/events')).toEqual({ bucket: 'my-bucket', prefix: 'events' });
    expect(parseS3Url('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', prefix: 'a/b' });
    expect(parseS3Url('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(() => parseS3Url('https://my-bucket/events')).toThrow(/not an S3 location/);
  });

  it('puts every staged file at the same relative key under the prefix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's3-publish-'));
    const files = ['domain=a.test/dt=2026-03-01/x.parquet', 'domain=a.test/dt=2026-03-02/y.parquet'];
    for (const f of files) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), `bytes of ${f}`);
    }
    const s3 = mockClient(S3Client);
    s3.on(PutObjectCommand).resolves({});
    await s3Publisher('s3://events-bucket/events', new S3Client({ region: 'eu-west-1' }))(dir, files);
    const puts = s3.commandCalls(PutObjectCommand).map((c) => c.args[0].input);
    expect(puts.map((p) => [p.Bucket, p.Key, String(p.Body)]).sort()).toEqual(
      files.map((f) => ['events-bucket', `events/${f}`, `bytes of ${f}`]).sort(),
    );
    s3.restore();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the days a domain already has in the bucket from its dt= folders, over every page of the listing', async () => {
    const s3 = mockClient(S3Client);
    s3.on(ListObjectsV2Command, { Prefix: 'events/domain=a.test/', ContinuationToken: undefined }).resolves({
      CommonPrefixes: [
        { Prefix: 'events/domain=a.test/dt=2024-05-02/' },
        { Prefix: 'events/domain=a.test/dt=2023-01-09/' },
      ],
      NextContinuationToken: 'more',
    });
    s3.on(ListObjectsV2Command, { Prefix: 'events/domain=a.test/', ContinuationToken: 'more' }).resolves({
      CommonPrefixes: [
        { Prefix: 'events/domain=a.test/dt=2025-11-30/' },
        { Prefix: 'events/domain=a.test/not-a-day/' },
      ],
    });
    s3.on(ListObjectsV2Command, { Prefix: 'events/domain=b.test/' }).resolves({});
    const storedDays = s3StoredDays('s3://events-bucket/events', new S3Client({ region: 'eu-west-1' }));
    expect(await storedDays('a.test')).toEqual({ firstDay: '2023-01-09', lastDay: '2025-11-30' });
    expect(await storedDays('b.test')).toBeUndefined();
    expect(
      s3
        .commandCalls(ListObjectsV2Command)
        .every((c) => c.args[0].input.Bucket === 'events-bucket' && c.args[0].input.Delimiter === '/'),
    ).toBe(true);
    s3.restore();
  });

  it('names the stack outputs when the table variables are missing', () => {
    const saved = process.env.COUNTERS_TABLE;
    delete process.env.COUNTERS_TABLE;
    expect(() => requireAwsTables(['COUNTERS_TABLE'])).toThrow(/CountersTableName/);
    process.env.COUNTERS_TABLE = saved;
  });
});

describe('keys --aws', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('creates a key in the table CREDENTIALS_TABLE names, through the default AWS client setup', async () => {
    // Stand-in for a deployed stack: the SDK reads AWS_ENDPOINT_URL, so dynalite plays the AWS table.
    const env = {
      ANALYTICS_DATA_DIR: mkdtempSync(join(tmpdir(), 'no-local-state-')),
      CREDENTIALS_TABLE: 'analytics-credentials',
      AWS_ENDPOINT_URL: api.dynamo.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: api.dynamo.credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: api.dynamo.credentials.secretAccessKey,
    };
    const created = await runCli('cli/keys-cli.ts', ['create', '--domain', 'aws.test', '--json', '--aws'], env);
    expect(created.code, created.stderr).toBe(0);
    const { token } = JSON.parse(created.stdout);
    const res = await api.request('GET', '/v1/annotations', { token, query: { domain: 'aws.test' } });
    expect(res.status).toBe(200);
  });

  it('refuses to guess the table', async () => {
    const result = await runCli('cli/keys-cli.ts', ['create', '--domain', 'aws.test', '--aws'], {
      CREDENTIALS_TABLE: '',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('CREDENTIALS_TABLE');
  });
});
