import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingestHandler } from '../support/deployed-functions.js';
import { upkeepHandler, upkeepStore } from '../support/deployed-functions.js';
import { UPKEEP_GRACE_MS, UPKEEP_SETTLE_MS } from '../../ingest/s3-upkeep.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { excludedFiles, readFileStates } from '../../shared/store/file-states-repo.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { generatedEvents } from '../support/generated-sessions.js';
import { cloudParts } from '../support/cloud-parts.js';
import { ingestBucket, motoClients, type IngestBucket } from '../support/ingest-bucket.js';
import { crashingWrites, visibleFilePaths, visibleMarks, visibleRows } from '../support/s3-store-view.js';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { forgetLayout } from '../support/forget-layout.js';
import { STORE_LAYOUT } from '../../shared/events/store-layout.js';
import { keysOf } from '../support/s3-keys.js';
import { largePayments } from '../support/large-payments.js';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';
import { S3_ZSTD_LEVEL } from '../../writer/parquet-codec.js';
import { rewriteAsWriters } from '../support/writer-rewrite.js';

// Upkeep of the S3 store against moto's S3 server and dynalite: a partition many ingests wrote is compacted into one
// file per relation; queries see the same rows before, during and after (read through the domain's file states, as
// every Athena query does), the replaced files stay until the grace period is over, and a crash after any write of
// upkeep leaves a readable store that the next run finishes. Session fragments merge and get whole marks, so the
// derived relations' rows change: their answers are compared through Trino in s3-ingest-path.test.ts; here the marks
// are checked against the fragments a query reads.

const parts = cloudParts();
const work = mkdtempSync(join(tmpdir(), 'upkeep-test-'));

const ndjson = (events: unknown[]) => events.map((e) => JSON.stringify(e)).join('\n') + '\n';

/** `objects` objects (default ten) of one domain's events over the days matched: that many files in each partition of every relation. */
async function crowdedBucket(
  domain: string,
  objects = 10,
  days = /^2026-03-0[123]/,
  extra: Record<string, unknown>[] = [],
): Promise<{ target: IngestBucket; events: Record<string, unknown>[] }> {
  const target = await ingestBucket(parts.moto);
  const events = [...generatedEvents(), ...extra]
    .map((e): Record<string, unknown> => ({ ...(e as Record<string, unknown>), domain }))
    .filter((e) => days.test(String(e.timestamp)));
  for (let i = 0; i < objects; i++)
    await target.put(`incoming/part-${i}.ndjson`, ndjson(events.filter((_, j) => j % objects === i)));
  expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
  return { target, events };
}

const eventRows = (target: IngestBucket) => visibleRows(target.s3, target.bucket, 'events', work);
const relationRows = (target: IngestBucket, folder: string) => visibleRows(target.s3, target.bucket, folder, work);

/** Rewrites every file of `folder` without `column`, in place: files as a version before the column wrote them. */
async function dropColumn(target: IngestBucket, folder: string, column: string): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    for (const key of (await keysOf(target.s3, target.bucket)).filter((k) => k.startsWith(`${folder}/`))) {
      const dir = mkdtempSync(join(work, 'drop-'));
      const object = await target.s3.send(new GetObjectCommand({ Bucket: target.bucket, Key: key }));
      writeFileSync(join(dir, 'in.parquet'), await object.Body!.transformToByteArray());
      await connection.run(
        `COPY (SELECT * EXCLUDE (${column}) FROM '${join(dir, 'in.parquet')}') TO '${join(dir, 'out.parquet')}' (FORMAT parquet)`,
      );
      await target.s3.send(
        new PutObjectCommand({ Bucket: target.bucket, Key: key, Body: readFileSync(join(dir, 'out.parquet')) }),
      );
    }
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The column names of each file of `folder` a query reads. */
async function visibleColumns(target: IngestBucket, folder: string): Promise<string[][]> {
  const files = await visibleFilePaths(target.s3, target.bucket, folder, work);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows = await connection.runAndReadAll(
      `SELECT file_name, list(name) AS names FROM parquet_schema([${files.map((f) => `'${f}'`).join(', ')}]) GROUP BY 1`,
    );
    expect(rows.getRowObjectsJS()).toHaveLength(files.length);
    return (rows.getRowObjectsJS() as { names: string[] }[]).map((r) => r.names);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** Every visible fragment is marked whole exactly when it is its session's only one. */
async function expectExactMarks(target: IngestBucket): Promise<void> {
  const marks = await visibleMarks(target.s3, target.bucket, work);
  expect(marks.filter((m) => m.marked !== (m.fragments === 1 ? 1 : 0))).toEqual([]);
  // The generated sessions: many in one partition, some across midnight UTC.
  expect(marks.filter((m) => m.marked === 1).length).toBeGreaterThan(50);
  expect(marks.filter((m) => m.fragments > 1).length).toBeGreaterThan(5);
}

/**
 * No session has two fragments marked whole: the rule that keeps Athena's merging of stale marks exact (page filters
 * below the current layout).
 */
async function expectOneMarkAtMost(target: IngestBucket): Promise<{ stale: number }> {
  const marks = await visibleMarks(target.s3, target.bucket, work);
  expect(marks.filter((m) => m.marked > 1)).toEqual([]);
  return { stale: marks.filter((m) => m.marked === 1 && m.fragments > 1).length };
}
/** The store's files: every relation's, not upkeep's own index. */
const fileCount = async (target: IngestBucket) =>
  (await keysOf(target.s3, target.bucket)).filter((k) => /^[a-z_]+\/domain=/.test(k) && !k.startsWith('upkeep/'))
    .length;

describe('upkeep of the S3 store', () => {
  it('compacts every crowded partition; replaced files are left out of queries, then deleted after the grace period', async () => {
    const { target } = await crowdedBucket('compact.test');
    const before = await eventRows(target);
    const filesBefore = await fileCount(target);
    const start = Date.now();
    const first = await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => start });
    expect(first.compacted.sort()).toEqual([
      'compact.test/dt=2026-03-01',
      'compact.test/dt=2026-03-02',
      'compact.test/dt=2026-03-03',
    ]);
    // Replaced files are still there for queries that started before, but every new query leaves them out.
    expect(await fileCount(target)).toBe(filesBefore + 3 * (1 + derivedRelations.length));
    expect(await excludedFiles('compact.test')).toHaveLength(30);
    expect(await eventRows(target)).toEqual(before);
    // Within the grace period nothing is deleted; after it, the replaced files go and the states are empty.
    expect(
      (await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => start + 1000 }))
        .cleaned,
    ).toEqual([]);
    const later = await upkeepStore(
      { client: target.s3, bucket: target.bucket, workDir: work },
      { now: () => start + UPKEEP_GRACE_MS + 1 },
    );
    expect(later.cleaned.sort()).toEqual(first.compacted.sort());
    expect(later.compacted).toEqual([]);
    expect(await fileCount(target)).toBe(3 * (1 + derivedRelations.length));
    expect(await excludedFiles('compact.test')).toEqual([]);
    expect(await eventRows(target)).toEqual(before);
    expect(await readUsage('compact.test')).toBe(before.length);
  });

  it("writes its compacted files at S3's ZSTD level: each is the bytes the same writer gives at that level", async () => {
    const { target } = await crowdedBucket('level.test', 10, /^2026-03-01/);
    expect((await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work })).compacted).toEqual([
      'level.test/dt=2026-03-01',
    ]);
    // The visible files are now the compaction's, one per relation. Written again from their own rows by the
    // writers' COPY at S3's level they come out byte for byte the same; at DuckDB's default level (3), larger.
    const scratch = await openScratchDuckDb();
    const rewrite = (folder: 'events' | DerivedFolder, file: string, level: number | undefined) =>
      rewriteAsWriters(
        scratch.connection,
        folder,
        's3',
        file,
        join(mkdtempSync(join(work, 'level-')), 'f.parquet'),
        level,
      );
    try {
      for (const folder of ['events', ...derivedRelations.map((r) => r.folder)] as const) {
        const files = await visibleFilePaths(target.s3, target.bucket, folder, work);
        expect(files, folder).toHaveLength(1);
        const written = readFileSync(files[0]!);
        expect((await rewrite(folder, files[0]!, S3_ZSTD_LEVEL)).equals(written), folder).toBe(true);
        const atDefault = await rewrite(folder, files[0]!, undefined);
        expect(atDefault.length, folder).toBeGreaterThan(written.length);
      }
    } finally {
      scratch.close();
    }
  });

  it('marks the fragments of each partition it rewrites whole exactly when their session has no other fragment', async () => {
    // One session of dev and not dev rows in one partition: two fragments in one file, neither whole.
    const devAndNot = [true, false].map((isDev, i) => ({
      timestamp: `2026-03-02T12:0${i}:00Z`,
      type: 'pageview',
      visitor_id: 'v-dev',
      session_id: 's-dev',
      url_path: '/',
      is_dev: isDev,
    }));
    const { target } = await crowdedBucket('marks.test', 10, undefined, devAndNot);
    expect((await visibleMarks(target.s3, target.bucket, work)).filter((m) => m.marked > 0)).toEqual([]);
    await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work });
    await expectExactMarks(target);
  });

  it('rewrites a partition of few files once they have settled, so that its fragments get marks too', async () => {
    const { target } = await crowdedBucket('settle.test', 1);
    const before = await eventRows(target);
    const run = (at: number) =>
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at });
    const start = Date.now();
    expect((await run(start)).compacted).toEqual([]);
    const settled = await run(start + UPKEEP_SETTLE_MS + 1);
    expect(settled.compacted.sort()).toEqual([
      'settle.test/dt=2026-03-01',
      'settle.test/dt=2026-03-02',
      'settle.test/dt=2026-03-03',
    ]);
    expect(await eventRows(target)).toEqual(before);
    await expectExactMarks(target);
    // Once rewritten, a partition is left alone until an ingest adds to it.
    await run(start + UPKEEP_SETTLE_MS + UPKEEP_GRACE_MS + 2);
    expect((await run(start + UPKEEP_SETTLE_MS + 2 * UPKEEP_GRACE_MS + 3)).compacted).toEqual([]);
  });

  it('an ingest after marking extends marked sessions with unmarked fragments: never two marks on a session, and the next rewrite marks again', async () => {
    const { target, events } = await crowdedBucket('extend.test');
    const start = Date.now();
    const run = (at: number) =>
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at });
    await run(start);
    await expectExactMarks(target);
    // A third of the sessions go on: the same hour a day later (another partition), and a minute later (the same one).
    const goOn = events.filter((e) => e.session_id !== '' && Number(String(e.session_id).slice(1)) % 3 === 0);
    const later = (e: Record<string, unknown>, ms: number) => ({
      ...e,
      timestamp: new Date(Date.parse(String(e.timestamp)) + ms).toISOString(),
    });
    await target.put(
      'incoming/later.ndjson',
      ndjson([...goOn.map((e) => later(e, 86_400_000)), ...goOn.map((e) => later(e, 60_000))]),
    );
    expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
    const { stale } = await expectOneMarkAtMost(target);
    expect(stale).toBeGreaterThan(10);
    const rewritten: string[] = [];
    for (const at of [start + UPKEEP_GRACE_MS + 1, start + 2 * UPKEEP_GRACE_MS + 2, start + 3 * UPKEEP_GRACE_MS + 3]) {
      rewritten.push(...(await run(at)).compacted);
      await expectOneMarkAtMost(target);
    }
    // The partitions the later ingest wrote to, settled, are rewritten with marks: a session's only fragment is marked.
    expect(rewritten.sort()).toEqual([
      'extend.test/dt=2026-03-01',
      'extend.test/dt=2026-03-02',
      'extend.test/dt=2026-03-03',
      'extend.test/dt=2026-03-04',
    ]);
    expect(
      (await visibleMarks(target.s3, target.bucket, work)).filter((m) => m.fragments === 1 && m.marked === 0),
    ).toEqual([]);
    expect((await eventRows(target)).length).toBe(events.length + 2 * goOn.length);
  });

  it("reads only what arrived since its last run: a run's requests do not grow with the domain's history", async () => {
    // Sixty days of history: the generated sessions six times over, ten days apart, each copy its own sessions.
    const DAY_MS = 86_400_000;
    const history = [0, 1, 2, 3, 4, 5].flatMap((copy) =>
      (generatedEvents() as Record<string, unknown>[]).map((e) => ({
        ...e,
        domain: 'history.test',
        timestamp: new Date(Date.parse(String(e.timestamp)) - copy * 10 * DAY_MS).toISOString(),
        ...(e.session_id ? { session_id: `${String(e.session_id)}-${copy}` } : {}),
      })),
    );
    const target = await ingestBucket(parts.moto);
    for (let copy = 0; copy < 6; copy++)
      await target.put(
        `incoming/history-${copy}.ndjson`,
        ndjson(history.slice(copy * (history.length / 6), (copy + 1) * (history.length / 6))),
      );
    expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
    const calls: string[] = [];
    target.s3.middlewareStack.add(
      (next, context) => (args) => {
        const input = args.input as { Key?: string; Prefix?: string };
        calls.push(`${context.commandName} ${input.Key ?? input.Prefix ?? ''}`);
        return next(args);
      },
      { step: 'initialize', name: 'countCalls' },
    );
    const run = (at: number) =>
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at });
    let at = Date.now() + UPKEEP_SETTLE_MS + 1;
    const partitions = (await run(at)).compacted;
    expect(partitions.length).toBeGreaterThanOrEqual(60);
    // One more event a day, settled and cleaned in turn: the first run after it catches up with the compacted files,
    // the next reads the new fragment file and the one compacted since, whatever the history.
    const latest = history.reduce((a, b) => (String(a.timestamp) > String(b.timestamp) ? a : b));
    let reads: string[] = [];
    for (const n of [1, 2]) {
      at += UPKEEP_GRACE_MS + UPKEEP_SETTLE_MS + 2;
      await run(at);
      await target.put(
        `incoming/one-more-${n}.ndjson`,
        ndjson([
          {
            ...latest,
            session_id: `one-more-${n}`,
            timestamp: new Date(Date.parse(String(latest.timestamp)) + n * 1000).toISOString(),
          },
        ]),
      );
      expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
      at += UPKEEP_SETTLE_MS + 1;
      calls.length = 0;
      expect((await run(at)).compacted).toHaveLength(1);
      reads = calls.filter((c) => c.startsWith('GetObjectCommand') || c.startsWith('ListObjectsV2Command imports/'));
    }
    expect(reads.filter((c) => c.includes(' sessions/'))).toHaveLength(2);
    // Besides: the saved index, the two event files compacted, and the new file's import record.
    expect(
      reads
        .filter((c) => !c.includes(' sessions/'))
        .map((c) => c.replace(/dt=[^/]+\/[^/]+$/, 'dt=…').replace(/imports\/[0-9a-f]+$/, 'imports/…'))
        .sort(),
    ).toEqual([
      'GetObjectCommand events/domain=history.test/dt=…',
      'GetObjectCommand events/domain=history.test/dt=…',
      'GetObjectCommand upkeep/domain=history.test/fragment-sessions.parquet',
      'ListObjectsV2Command imports/…',
    ]);
    expect(await expectOneMarkAtMost(target)).toEqual({ stale: 0 });
    expect((await eventRows(target)).length).toBe(history.length + 2);
  });

  it('hides at most maxHiddenFiles of a domain at once: a partition beyond the room left is compacted in part', async () => {
    const { target } = await crowdedBucket('budget.test');
    const before = await eventRows(target);
    const run = (at: number) =>
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at, maxHiddenFiles: 25 });
    const start = Date.now();
    // Ten files per partition: two partitions fit in 25 hidden names, the third gets the room left (4 files).
    expect((await run(start)).compacted).toHaveLength(3);
    expect((await excludedFiles('budget.test')).length).toBeLessThanOrEqual(25);
    expect(await eventRows(target)).toEqual(before);
    const later = await run(start + UPKEEP_GRACE_MS + 1);
    expect(later.cleaned).toHaveLength(3);
    expect(await eventRows(target)).toEqual(before);
    // The third partition's compacted file and the six files left are compacted together once they have settled:
    // by this run or the next (S3 keeps a file's time to the second, so "settled" may already hold here).
    const last = await run(start + UPKEEP_GRACE_MS + UPKEEP_SETTLE_MS + 2);
    expect([...later.compacted, ...last.compacted]).toEqual(['budget.test/dt=2026-03-03']);
    expect(await eventRows(target)).toEqual(before);
  });

  it('a partition more crowded than the whole budget is compacted in chunks and never keeps the others waiting', async () => {
    // 30 files in each partition, a budget of 25: every run makes progress on every partition it reaches.
    const { target } = await crowdedBucket('crowded.test', 30);
    const before = await eventRows(target);
    const run = (at: number) =>
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at, maxHiddenFiles: 25 });
    const start = Date.now();
    const first = await run(start);
    expect(first.compacted).toEqual(['crowded.test/dt=2026-03-01']);
    expect((await excludedFiles('crowded.test')).length).toBeLessThanOrEqual(25);
    let at = start;
    for (let i = 0; i < 12; i++) {
      at += UPKEEP_GRACE_MS + 1;
      const report = await run(at);
      expect(await eventRows(target)).toEqual(before);
      if (report.compacted.length === 0 && report.cleaned.length === 0) break;
    }
    // Every partition ends as one file per relation.
    const eventFiles = (await keysOf(target.s3, target.bucket)).filter((k) =>
      k.startsWith('events/domain=crowded.test/'),
    );
    expect(eventFiles.map((k) => k.split('/')[2]).sort()).toEqual(['dt=2026-03-01', 'dt=2026-03-02', 'dt=2026-03-03']);
  });

  it('leaves a partition whose compacted visitor day would pass the 64-bit revenue range as it is; it takes no room from the others', async () => {
    const payments = (from: number, day: string, count: number) =>
      largePayments({ domain: 'whale.test', day, count, from });
    const target = await ingestBucket(parts.moto);
    // Each object's day of revenue fits (600 x (2^53 - 1) < 2^63); the two together would not.
    for (const from of [0, 600])
      await target.put(
        `incoming/whale-${from}.ndjson`,
        ndjson([...payments(from, '2026-03-05', 600), ...payments(from, '2026-03-06', 2)]),
      );
    expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
    const before = await eventRows(target);
    // A budget the first partition's two files would fill: one that cannot be rewritten takes no room.
    const report = await upkeepStore(
      { client: target.s3, bucket: target.bucket, workDir: work },
      { minFiles: 2, maxHiddenFiles: 3 },
    );
    expect(report.compacted).toEqual(['whale.test/dt=2026-03-06']);
    expect((await eventRows(target)).sort()).toEqual(before.sort());
  });

  it('brings a domain written before the current layout up to it, partition by partition within its room, then records the layout', async () => {
    const { target } = await crowdedBucket('upgrade.test', 1);
    expect((await readFileStates('upgrade.test')).layout).toBe(STORE_LAYOUT);
    // As written before the layout's columns: page buckets without referrers, fragments without paths, and no
    // layout recorded.
    await dropColumn(target, 'pages', 'referrer_domain');
    await dropColumn(target, 'sessions', 'url_paths');
    await forgetLayout('upgrade.test');
    // An ingest into a domain that has files records no layout: its own files are current, the others may not be.
    const late = generatedEvents()
      .map((e): Record<string, unknown> => ({ ...(e as Record<string, unknown>), domain: 'upgrade.test' }))
      .filter((e) => /^2026-03-03/.test(String(e.timestamp)))
      .slice(0, 20)
      .map((e) => ({ ...e, session_id: `late-${String(e.session_id)}`, visitor_id: `late-${String(e.visitor_id)}` }));
    await target.put('incoming/late.ndjson', ndjson(late));
    expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
    expect((await readFileStates('upgrade.test')).layout).toBe(0);
    const before = await Promise.all(['events', 'pageviews', 'custom_events'].map((f) => relationRows(target, f)));
    const run = (at: number) =>
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at, maxHiddenFiles: 3 });
    const start = Date.now();
    // Room for two partitions of one file: the first two, in order; the third (two files) waits, and so does the
    // layout.
    const first = await run(start);
    expect(first.compacted).toEqual(['upgrade.test/dt=2026-03-01', 'upgrade.test/dt=2026-03-02']);
    expect(first.upgraded).toEqual([]);
    expect(await readFileStates('upgrade.test')).toMatchObject({ layout: 0, upgraded: 'dt=2026-03-02' });
    // After the grace period the replaced files go, the last partition is rewritten and the layout recorded.
    const second = await run(start + UPKEEP_GRACE_MS + 1);
    expect(second.compacted).toEqual(['upgrade.test/dt=2026-03-03']);
    expect(second.upgraded).toEqual(['upgrade.test']);
    const states = await readFileStates('upgrade.test');
    expect(states.layout).toBe(STORE_LAYOUT);
    expect(states.upgraded).toBeUndefined();
    // Every file a query reads has every column of its relation; rows of the relations that had none missing are
    // the same, and the page buckets have their referrers back.
    for (const { folder, columns } of derivedRelations)
      for (const names of await visibleColumns(target, folder))
        expect(
          columns.map(([c]) => c).filter((c) => !names.includes(c)),
          folder,
        ).toEqual([]);
    expect(await Promise.all(['events', 'pageviews', 'custom_events'].map((f) => relationRows(target, f)))).toEqual(
      before,
    );
    expect((await relationRows(target, 'pages')).some((r) => JSON.parse(r).referrer_domain !== null)).toBe(true);
    // Done: the next runs leave the domain alone.
    await run(start + 2 * UPKEEP_GRACE_MS + 2);
    expect((await run(start + 3 * UPKEEP_GRACE_MS + 3)).compacted).toEqual([]);
  });

  it('runs one at a time: a run that finds the lease held does nothing; a run past its budget leaves the next domain to the next run', async () => {
    const { target } = await crowdedBucket('turn-a.test');
    for (const [i, e] of generatedEvents()
      .filter((e) => /^2026-03-01/.test(String((e as { timestamp: string }).timestamp)))
      .entries()) {
      if (i % 10 === 0)
        await target.put(`incoming/b-${i}.ndjson`, ndjson([{ ...(e as object), domain: 'turn-b.test' }]));
    }
    expect(await target.deliver(ingestHandler(target.s3, work))).toEqual([]);
    const options = { minFiles: 2, settleMs: 0 };
    const runs = await Promise.all(
      [0, 1].map(() =>
        upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { ...options, budgetMs: 0 }),
      ),
    );
    expect(runs.filter((r) => r.busy)).toHaveLength(1);
    const done = runs.find((r) => !r.busy)!;
    // Its budget spent after one domain: the first of the sorted list; the next run starts at the other.
    expect(new Set(done.compacted.map((p) => p.split('/')[0]))).toEqual(new Set(['turn-a.test']));
    expect(done.next).toBe('turn-b.test');
    const second = await upkeepStore(
      { client: target.s3, bucket: target.bucket, workDir: work },
      { ...options, budgetMs: 0 },
    );
    expect(second.busy).toBeUndefined();
    expect(new Set(second.compacted.map((p) => p.split('/')[0]))).toEqual(new Set(['turn-b.test']));
    expect(second.next).toBe('turn-a.test');
  });

  it("the scheduled handler runs the same upkeep on the stack's bucket", async () => {
    const { target } = await crowdedBucket('handler.test');
    const report = await upkeepHandler(target.s3, target.bucket, work)();
    expect(report.compacted).toHaveLength(3);
  });

  it('leaves alone the files of an import that is not finished, and a partition whose compaction waits for deletion', async () => {
    const { target } = await crowdedBucket('busy.test');
    // An import that died after its uploads: its files are hidden and it has no record.
    const extra = generatedEvents()
      .map((e): Record<string, unknown> => ({
        ...(e as Record<string, unknown>),
        domain: 'busy.test',
        visitor_id: 'late',
      }))
      .filter((e) => /^2026-03-01/.test(String(e.timestamp)));
    await target.put('incoming/unfinished.ndjson', ndjson(extra));
    const records = await target.receive();
    let writes = 0;
    // The import runs up to its record (hide, derived, events, usage), then dies.
    const { s3: dyingClient } = motoClients(parts.moto);
    dyingClient.middlewareStack.add(
      (next, context) => async (args) => {
        if (
          context.commandName === 'PutObjectCommand' &&
          String((args.input as { Key?: string }).Key).startsWith('imports/')
        )
          throw new Error('the process died');
        writes += 1;
        return next(args);
      },
      { step: 'initialize', name: 'dieAtRecord' },
    );
    const delivery = { Records: records.filter((r) => r.body.includes('ObjectCreated')) };
    const result = await ingestHandler(dyingClient, work)(delivery);
    expect(result.batchItemFailures).toHaveLength(1);
    expect(writes).toBeGreaterThan(0);
    const hidden = await excludedFiles('busy.test');
    expect(hidden.length).toBeGreaterThan(0);
    const visible = await eventRows(target);

    const report = await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work });
    // Its partition holds a hidden import: not compacted; the others are.
    expect(report.compacted.sort()).toEqual(['busy.test/dt=2026-03-02', 'busy.test/dt=2026-03-03']);
    expect(await eventRows(target)).toEqual(visible);
    // The redelivered import finishes; the next run compacts its partition with it.
    expect((await ingestHandler(target.s3, work)(delivery)).batchItemFailures).toEqual([]);
    expect((await eventRows(target)).length).toBe(visible.length + extra.length);
    const next = await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work });
    expect(next.compacted).toEqual(['busy.test/dt=2026-03-01']);
    expect((await eventRows(target)).length).toBe(visible.length + extra.length);
  });

  it('an ingest into the partitions upkeep is compacting, at the same time: every row once, before and after', async () => {
    const { target, events } = await crowdedBucket('meanwhile.test');
    const extra = events.map((e) => ({ ...e, visitor_id: `${String(e.visitor_id)}-again` }));
    await target.put('incoming/meanwhile.ndjson', ndjson(extra));
    const start = Date.now();
    const [failed] = await Promise.all([
      target.deliver(ingestHandler(target.s3, work)),
      upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => start }),
    ]);
    expect(failed).toEqual([]);
    expect((await eventRows(target)).length).toBe(events.length + extra.length);
    for (const at of [start + UPKEEP_GRACE_MS + 1, start + 2 * UPKEEP_GRACE_MS + 2, start + 3 * UPKEEP_GRACE_MS + 3]) {
      await upkeepStore({ client: target.s3, bucket: target.bucket, workDir: work }, { now: () => at });
      expect((await eventRows(target)).length).toBe(events.length + extra.length);
      await expectOneMarkAtMost(target);
    }
    expect(await readUsage('meanwhile.test')).toBe(events.length + extra.length);
  });

  it(
    'a crash after every write of upkeep: queries read the same rows meanwhile, and later runs finish the work',
    { timeout: 600_000 },
    async () => {
      // Two partitions of three files each (the same three import names in both), compacted from three on: every write
      // of both compactions and their clean-up is a crash point, also while one partition is swapped and the other not.
      const crowded = (domain: string) => crowdedBucket(domain, 3, /^2026-03-0[23]/);
      // A run that dies holds its lease until the lease ends (16 minutes on AWS); here it ends at once, so the runs
      // that go on after a crash are not turned away.
      const options = { minFiles: 3, leaseMs: 1 };
      const reference = await crowded('upkeep-crash.test');
      const expected = await eventRows(reference.target);
      const counting = crashingWrites(parts.moto);
      const start = Date.now();
      await upkeepStore(
        { client: counting.client, bucket: reference.target.bucket, workDir: work },
        { ...options, now: () => start },
      );
      await upkeepStore(
        { client: counting.client, bucket: reference.target.bucket, workDir: work },
        { ...options, now: () => start + UPKEEP_GRACE_MS + 1 },
      );
      counting.disarm();
      const total = counting.count();
      // File names carry digests of their contents, which differ by domain: compared as shapes.
      const shape = (keys: string[], domain: string) =>
        keys
          .filter((k) => /^[a-z_]+\/domain=/.test(k))
          .map((k) => k.replace(domain, 'D').replace(/[0-9a-f]{32}/, 'X'))
          .sort();
      const clean = shape(await keysOf(reference.target.s3, reference.target.bucket), 'upkeep-crash.test');
      console.info(`upkeep crash test: ${total} writes to S3 and DynamoDB, a crash after each`);
      for (let crashAt = 0; crashAt < total; crashAt++) {
        const i = crashAt;
        const { target } = await crowded(`upkeep-crash-${i}.test`);
        const dying = crashingWrites(parts.moto, crashAt);
        const run = (client = target.s3, at = start) =>
          upkeepStore({ client, bucket: target.bucket, workDir: work }, { ...options, now: () => at });
        const died = await run(dying.client)
          .then(() => run(dying.client, start + UPKEEP_GRACE_MS + 1))
          .then(
            () => false,
            () => true,
          );
        dying.disarm();
        expect(died, `write ${crashAt} of ${total}`).toBe(true);
        expect(await eventRows(target), `rows after a crash at write ${crashAt}`).toEqual(expected);
        await expectOneMarkAtMost(target);
        // Runs go on; twice the grace period later every compaction is finished and its replaced files are gone.
        await run(target.s3, start + UPKEEP_GRACE_MS + 2);
        await run(target.s3, start + 2 * UPKEEP_GRACE_MS + 3);
        await run(target.s3, start + 3 * UPKEEP_GRACE_MS + 4);
        expect(await eventRows(target), `rows once upkeep went on after a crash at write ${crashAt}`).toEqual(expected);
        const marks = await visibleMarks(target.s3, target.bucket, work);
        expect(
          marks.filter((m) => m.marked !== (m.fragments === 1 ? 1 : 0)),
          `marks once upkeep went on after a crash at write ${crashAt}`,
        ).toEqual([]);
        // Nothing pending or superseded is left (the version counts the writes and is not compared).
        const { pending, superseded } = await readFileStates(`upkeep-crash-${i}.test`);
        expect({ pending, superseded }, `states after a crash at write ${crashAt}`).toEqual({
          pending: {},
          superseded: {},
        });
        expect(
          shape(await keysOf(target.s3, target.bucket), `upkeep-crash-${i}.test`),
          `files after a crash at write ${crashAt}`,
        ).toEqual(clean);
      }
    },
  );
});
