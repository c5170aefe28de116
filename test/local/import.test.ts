import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEventBatch, MAX_STORED_ROW_BYTES } from '../../writer/checked-batches.js';
import { importEvents as importTo } from '../../writer/importer.js';
import type { ImportDestination, StagedImport } from '../../writer/destination.js';
import { s3Destination } from '../../ingest/s3-store.js';
import { importEvents, importLines, importNdjson } from '../../local/store/local-destination.js';
import { MAX_LINE_BYTES } from '../../writer/ndjson-lines.js';
import { DEFAULT_LOCAL_CODECS, localCodecs, S3_CODECS, S3_ZSTD_LEVEL } from '../../writer/parquet-codec.js';
import { rewriteAsWriters } from '../support/writer-rewrite.js';
import { backfillDerived } from '../../local/store/backfill.js';
import { writeCompacted } from '../../writer/compacted-file.js';
import { openScratchDuckDb } from '../../writer/scratch-duckdb.js';
import { generatedEvents } from '../support/generated-sessions.js';
import { localPaths, type LocalPaths } from '../../local/store/paths.js';
import { derivedRelations, type DerivedFolder } from '../../shared/events/derived-relations.js';
import { eventColumns } from '../../shared/events/event-columns.js';
import { checkEvent, MAX_EVENT_DOMAIN_LENGTH, referrerDomain } from '../../shared/events/event-validation.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { queryParquet, sqlPath } from '../support/parquet-rows.js';
import { runCli } from '../support/run-cli.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

/** An events bucket's destination whose publish hands the staged files to `inspect` instead of uploading them. */
function s3Staged(inspect: (staged: StagedImport) => Promise<void>): ImportDestination {
  return {
    ...s3Destination('s3://inspected/events', tempDir()),
    settleImported: async () => false,
    storedDays: async () => undefined,
    publish: async (staged) => {
      await inspect(staged);
      return true;
    },
  };
}

// The importer on real files: validation reasons with line numbers, the stored values read back from Parquet,
// the partition layout, all-or-nothing writes, the usage counter, and `npm run import` as a child process.

let api: TestApi;
const tempDirs: string[] = [];

beforeAll(async () => {
  api = await startTestApi(); // serves DynamoDB (usage counters) for the whole file
});
afterAll(async () => {
  await api?.close();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'import-test-'));
  tempDirs.push(dir);
  return dir;
}

function writeNdjson(lines: unknown[]): string {
  const file = join(tempDir(), 'events.ndjson');
  writeFileSync(file, lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n');
  return file;
}

function parquetFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.parquet'))
      .sort();
  } catch {
    return [];
  }
}

const pageview = {
  domain: 'shop.test',
  timestamp: '2026-03-01T10:00:00Z',
  type: 'pageview',
  visitor_id: 'v1',
  session_id: 's1',
  url_path: '/',
};
const event = { ...pageview, type: 'event', event_name: 'signup', event_properties: { plan: 'pro' } };
const auto = { ...pageview, type: 'auto', event_name: 'exit_link', event_properties: { url: 'https://github.com/x' } };
const revenue = {
  domain: 'shop.test',
  timestamp: '2026-03-01T11:00:00Z',
  type: 'revenue',
  visitor_id: 'v1',
  transaction_id: 't1',
  amount_cents: 5000,
  currency: 'USD',
  revenue_event: 'payment',
};
const without = (row: Record<string, unknown>, field: string) =>
  Object.fromEntries(Object.entries(row).filter(([key]) => key !== field));

/** A valid host name of `length` characters, in labels of at most 63. */
function longDomain(length: number): string {
  const labels: string[] = [];
  for (let left = length; left > 0; left -= 64) labels.push('a'.repeat(Math.min(63, left)));
  return labels.join('.');
}

describe('validation', () => {
  const cases: [string, unknown, RegExp][] = [
    ['not JSON', '{"domain": "shop.test",', /^not valid JSON/],
    ['not an object', '[1, 2]', /must be a JSON object/],
    ['missing domain', without(pageview, 'domain'), /missing required field domain/],
    ['missing timestamp', without(pageview, 'timestamp'), /missing required field timestamp/],
    ['missing type', without(pageview, 'type'), /missing required field type/],
    ['unknown type', { ...pageview, type: 'click' }, /unknown type "click"/],
    ['missing visitor_id', without(pageview, 'visitor_id'), /missing required field visitor_id/],
    ['empty visitor_id', { ...pageview, visitor_id: '' }, /visitor_id must not be empty/],
    ['numeric visitor_id', { ...pageview, visitor_id: 42 }, /visitor_id must be a string/],
    // What the API cannot be asked about is not stored: a visitor id past 256, an event name past 512 or a path's "." or "..".
    [
      'visitor_id longer than the API looks up',
      { ...pageview, visitor_id: 'v'.repeat(257) },
      /visitor_id must be at most 256 characters/,
    ],
    [
      'event_name longer than a path parameter',
      { ...event, event_name: 'e'.repeat(513) },
      /event_name must be at most 512 characters and not "\." or "\.\."/,
    ],
    ['event_name "."', { ...event, event_name: '.' }, /event_name must be at most 512 characters and not/],
    ['event_name ".."', { ...event, event_name: '..' }, /event_name must be at most 512 characters and not/],
    ['property key ".."', { ...event, event_properties: { '..': 'x' } }, /must be a plain name: .*not "\.", "\.\."/],
    ['pageview without session_id', without(pageview, 'session_id'), /missing required field session_id/],
    ['pageview without url_path', without(pageview, 'url_path'), /missing required field url_path/],
    ['url_path not a path', { ...pageview, url_path: 'pricing' }, /url_path must be a path/],
    ['event without event_name', without(event, 'event_name'), /missing required field event_name/],
    ['auto without session_id', without(auto, 'session_id'), /missing required field session_id/],
    [
      'unknown auto event',
      { ...auto, event_name: 'hover' },
      /auto event_name must be one of click, form_submit, exit_link/,
    ],
    ['exit_link without url', { ...auto, event_properties: {} }, /exit_link event needs event_properties.url/],
    ['revenue without amount', without(revenue, 'amount_cents'), /missing required field amount_cents/],
    ['amount as a string', { ...revenue, amount_cents: '5000' }, /amount_cents must be an integer/],
    ['fractional amount', { ...revenue, amount_cents: 12.5 }, /amount_cents must be an integer/],
    ['revenue without transaction_id', without(revenue, 'transaction_id'), /missing required field transaction_id/],
    ['revenue without currency', without(revenue, 'currency'), /missing required field currency/],
    ['lower-case currency', { ...revenue, currency: 'usd' }, /currency must be an upper-case ISO 4217 code/],
    ['revenue without revenue_event', without(revenue, 'revenue_event'), /missing required field revenue_event/],
    [
      'timestamp without zone',
      { ...pageview, timestamp: '2026-03-01T10:00:00' },
      /must be an ISO 8601 instant with Z or an offset/,
    ],
    ['date-only timestamp', { ...pageview, timestamp: '2026-03-01' }, /must be an ISO 8601 instant/],
    ['impossible date', { ...pageview, timestamp: '2026-02-30T10:00:00Z' }, /is not a real date and time/],
    ['impossible hour', { ...pageview, timestamp: '2026-03-01T24:00:00Z' }, /is not a real date and time/],
    ['numeric timestamp', { ...pageview, timestamp: 1772359200000 }, /timestamp must be a string/],
    ['upper-case domain', { ...pageview, domain: 'Shop.test' }, /domain "Shop.test" must be a lower-case domain name/],
    ['domain with a path', { ...pageview, domain: 'shop.test/x' }, /must be a lower-case domain name/],
    [
      'domain longer than a folder name allows',
      { ...pageview, domain: longDomain(MAX_EVENT_DOMAIN_LENGTH + 1) },
      /domain must be at most 248 characters/,
    ],
    ['lower-case country', { ...pageview, country: 'us' }, /country must be an upper-case ISO 3166-1 alpha-2 code/],
    ['three-letter country', { ...pageview, country: 'USA' }, /country must be/],
    ['unknown device', { ...pageview, device: 'phone' }, /device must be one of desktop, mobile, tablet/],
    ['numeric browser', { ...pageview, browser: 7 }, /browser must be a string or null/],
    ['scroll depth over 100', { ...pageview, scroll_depth: 101 }, /scroll_depth must be between 0 and 100/],
    ['negative scroll depth', { ...pageview, scroll_depth: -1 }, /scroll_depth must be between 0 and 100/],
    ['scroll depth as a string', { ...pageview, scroll_depth: '50' }, /scroll_depth must be a number/],
    ['scroll depth on an event', { ...event, scroll_depth: 50 }, /scroll_depth is only allowed on pageview rows/],
    [
      'nested property',
      { ...event, event_properties: { plan: { name: 'pro' } } },
      /event_properties.plan must be a string, number or boolean/,
    ],
    [
      'null property value',
      { ...event, event_properties: { plan: null } },
      /event_properties.plan must be a string, number or boolean/,
    ],
    ['properties as an array', { ...event, event_properties: ['pro'] }, /event_properties must be a JSON object/],
    ['is_dev as a string', { ...pageview, is_dev: 'true' }, /is_dev must be true or false/],
  ];

  it('reports each bad line with its 1-based number and reason, and writes the good ones', async () => {
    // Good lines at 1 and the end, a blank line (skipped, still counted) in between.
    const file = writeNdjson([pageview, '', ...cases.map(([, line]) => line), revenue]);
    const paths = localPaths(tempDir());
    const report = await importNdjson(file, paths);
    expect(report.rowsWritten).toBe(2);
    expect(report.rejected.map((r) => r.line)).toEqual(cases.map((_, i) => i + 3));
    report.rejected.forEach(({ reason }, i) => expect(reason, cases[i]![0]).toMatch(cases[i]![2]));
    expect(parquetFiles(paths.eventsDir)).toHaveLength(1);
  });

  it('accepts optional fields as null, offsets, unknown fields, CRLF line ends and a byte-order mark', async () => {
    const lines = [
      {
        ...revenue,
        session_id: '',
        referrer: null,
        country: null,
        device: null,
        scroll_depth: null,
        collector_version: '1.2',
      },
      { ...pageview, timestamp: '2026-03-01T12:00:00.5+05:30', device: 'tablet', scroll_depth: 0, is_dev: false },
      { ...event, event_properties: {}, timestamp: '2026-03-01T12:00:00-0800' },
      { ...pageview, timestamp: '2026-03-01T12:00+01' },
    ].map((line) => JSON.stringify(line));
    const file = join(tempDir(), 'crlf.ndjson');
    writeFileSync(file, '\uFEFF' + lines.join('\r\n') + '\r\n');
    const report = await importNdjson(file, localPaths(tempDir()));
    expect(report.rejected).toEqual([]);
    expect(report.rowsWritten).toBe(4);
  });
});

describe('stored rows', () => {
  let paths: LocalPaths;
  beforeAll(async () => {
    paths = localPaths(tempDir());
    const report = await importEvents(
      [
        {
          ...pageview,
          timestamp: '2026-03-01T10:00:00.123456789Z',
          referrer: 'https://WWW.Google.com/search?q=x',
          utm_source: '',
          scroll_depth: 42.5,
          country: 'US',
          region: 'CA',
          city: 'San Francisco',
          browser: 'Chrome',
          os: 'macOS',
          device: 'desktop',
        },
        { ...pageview, timestamp: '2026-03-01T23:30:00-02:00', visitor_id: 'v2', referrer: 'not a url', is_dev: true },
        {
          ...event,
          timestamp: '2026-03-01T10:01:00Z',
          referrer: 'https://news.ycombinator.com/item?id=1',
          event_properties: { plan: 3, trial: true, note: 'a "quoted" text' },
        },
        { ...revenue, amount_cents: -1000, revenue_event: 'refund', url_path: '/checkout' },
      ],
      paths,
    );
    expect(report).toEqual({
      rowsWritten: 4,
      rowsAccepted: 4,
      rejected: [],
      domains: { 'shop.test': 4 },
      files: 2,
      alreadyImported: false,
    });
  });

  const glob = () => sqlPath(join(paths.eventsDir, '*', '*', '*.parquet'));

  it('writes exactly the columns of eventColumns, in order, without the partition columns', async () => {
    const columns = await queryParquet(`DESCRIBE SELECT * FROM read_parquet(${glob()}, hive_partitioning = false)`);
    expect(columns.map((c) => [c.column_name, c.column_type])).toEqual(
      eventColumns.map(([name, type]) => [
        name,
        { timestamp: 'TIMESTAMP', string: 'VARCHAR', double: 'DOUBLE', bigint: 'BIGINT', boolean: 'BOOLEAN' }[type],
      ]),
    );
  });

  it('stores timestamps in UTC truncated to milliseconds, partitioned by their UTC date', async () => {
    const rows = await queryParquet(
      `SELECT CAST(ts AS VARCHAR) AS ts, CAST(dt AS VARCHAR) AS dt, visitor_id, type FROM read_parquet(${glob()}, hive_partitioning = true) ORDER BY ts`,
    );
    expect(rows.map((r) => [r.ts, r.dt, r.type])).toEqual([
      ['2026-03-01 10:00:00.123', '2026-03-01', 'pageview'],
      ['2026-03-01 10:01:00', '2026-03-01', 'event'],
      ['2026-03-01 11:00:00', '2026-03-01', 'revenue'],
      ['2026-03-02 01:30:00', '2026-03-02', 'pageview'],
    ]);
  });

  it('gives "not set" one meaning, and one referrer domain to every spelling of a host', () => {
    const checked = checkEvent({
      ...pageview,
      utm_source: '(not set)',
      city: '(not set)',
      browser: 'Firefox',
      region: '(Not Set)',
    });
    expect(checked.ok && checked.event).toMatchObject({
      utm_source: undefined,
      city: undefined,
      browser: 'Firefox',
      region: '(Not Set)',
    });
    for (const referrer of [
      'https://example.com/a',
      'https://WWW.Example.COM./b',
      'http://www.example.com.:8080/',
      'https://EXAMPLE.com.',
    ]) {
      expect(referrerDomain(referrer), referrer).toBe('example.com');
    }
    expect(referrerDomain('https://www2.example.com/')).toBe('www2.example.com');
  });

  it('derives referrer_domain, keeps property values as text, and fills defaults', async () => {
    const rows = await queryParquet(
      `SELECT type, referrer, referrer_domain, session_id, url_path, utm_source, country, scroll_depth, event_name, event_properties,
              transaction_id, CAST(amount_cents AS INTEGER) AS amount_cents, currency, revenue_event, is_dev
       FROM read_parquet(${glob()}) ORDER BY ts`,
    );
    expect(rows[0]).toMatchObject({
      referrer: 'https://WWW.Google.com/search?q=x',
      referrer_domain: 'google.com',
      utm_source: null,
      country: 'US',
      scroll_depth: 42.5,
      event_properties: null,
      amount_cents: null,
      is_dev: false,
    });
    expect(rows[1]).toMatchObject({
      referrer_domain: 'news.ycombinator.com',
      event_name: 'signup',
      scroll_depth: null,
    });
    expect(JSON.parse(rows[1]!.event_properties as string)).toEqual({
      plan: '3',
      trial: 'true',
      note: 'a "quoted" text',
    });
    expect(rows[2]).toMatchObject({
      type: 'revenue',
      referrer: null,
      referrer_domain: '',
      session_id: '',
      url_path: '/checkout',
      amount_cents: -1000,
      currency: 'USD',
      revenue_event: 'refund',
      transaction_id: 't1',
      country: null,
    });
    expect(rows[3]).toMatchObject({ referrer: 'not a url', referrer_domain: '', is_dev: true, session_id: 's1' });
  });
});

describe('layout and atomicity', () => {
  it('writes one file per domain and UTC date, under domain=/dt=, whatever the batch size', async () => {
    const paths = localPaths(tempDir());
    const rows = [3, 1, 2].flatMap((minute) => [
      { ...pageview, timestamp: `2026-03-01T10:0${minute}:00Z` },
      { ...pageview, domain: 'other.test', timestamp: `2026-03-0${minute}T10:00:00Z` },
    ]);
    const report = await importEvents(rows, paths);
    expect(report.domains).toEqual({ 'shop.test': 3, 'other.test': 3 });
    const files = parquetFiles(paths.eventsDir);
    expect(files.map((f) => f.split('/').slice(0, 2).join('/'))).toEqual([
      'domain=other.test/dt=2026-03-01',
      'domain=other.test/dt=2026-03-02',
      'domain=other.test/dt=2026-03-03',
      'domain=shop.test/dt=2026-03-01',
    ]);
    expect(report.files).toBe(4);

    // Checked and staged 2 rows at a time, the files are still one per partition.
    const batched = localPaths(tempDir());
    expect((await importEvents(rows, batched, { batchRows: 2 })).files).toBe(4);
    expect(parquetFiles(batched.eventsDir)).toHaveLength(4);
  });

  it('stores the largest line a file may hold, its numbers written out as text, and rejects an event given as a value whose row is too large', async () => {
    // A line of 1 MiB (the longest read) of properties whose numbers grow most when kept as text.
    const [head, tail] = JSON.stringify({ ...event, event_properties: { k: 0 } }).split('{"k":0}') as [string, string];
    const keys: string[] = [];
    // Each property takes `"k<n>":1e20,`: its key's length and 8 more.
    for (let length = head.length + tail.length + 2; length < MAX_LINE_BYTES - 20; length += keys.at(-1)!.length + 8)
      keys.push(`k${keys.length}`);
    const longest = `${head}{${keys.map((k) => `"${k}":1e20`).join(',')}}${tail}`;
    expect(Buffer.byteLength(longest)).toBeGreaterThan(MAX_LINE_BYTES - 40);
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(MAX_LINE_BYTES);
    const paths = localPaths(tempDir());
    const file = writeNdjson([]);
    writeFileSync(file, `${longest}\n`);
    expect((await importNdjson(file, paths)).rowsWritten).toBe(1);
    const [stored] = await queryParquet(
      `SELECT event_properties FROM read_parquet(${sqlPath(join(paths.eventsDir, '*', '*', '*.parquet'))}, hive_partitioning = false)`,
    );
    expect(JSON.parse(stored!.event_properties as string)).toEqual(
      Object.fromEntries(keys.map((k) => [k, '100000000000000000000'])),
    );

    // Events given as values have no line limit: a row just under the bound is stored, one over it rejected.
    const sized = (bytes: number, visitor: string) => {
      const shortest = checkEventBatch([{ ...pageview, visitor_id: visitor }]).rows.byteLength - 1; // its row, LF left out
      return { ...pageview, visitor_id: visitor, url_path: `/${'x'.repeat(bytes - shortest)}` };
    };
    const values = localPaths(tempDir());
    const report = await importEvents(
      [sized(MAX_STORED_ROW_BYTES, 'fits'), sized(MAX_STORED_ROW_BYTES + 1, 'over'), pageview],
      values,
    );
    expect(report.rejected).toEqual([
      { line: 2, reason: `event too large: its stored row would take more than ${MAX_STORED_ROW_BYTES} bytes` },
    ]);
    const visitors = await queryParquet(
      `SELECT visitor_id FROM read_parquet(${sqlPath(join(values.eventsDir, '*', '*', '*.parquet'))}, hive_partitioning = false) ORDER BY 1`,
    );
    expect(visitors.map((r) => r.visitor_id)).toEqual(['fits', 'v1']);
  });

  it('stores a domain of the longest name its folder allows', async () => {
    const paths = localPaths(tempDir());
    const domain = longDomain(MAX_EVENT_DOMAIN_LENGTH);
    expect(domain).toHaveLength(248);
    expect((await importEvents([{ ...pageview, domain }], paths)).files).toBe(1);
    expect(parquetFiles(paths.eventsDir)[0]).toMatch(
      new RegExp(`^domain=${domain.replaceAll('.', '\\.')}/dt=2026-03-01/`),
    );
  });

  it('writes every row once when batches of many partitions and of one hold the same partitions', async () => {
    // 100 rows over 100 domains fill the first batch; then 100 rows of one domain's day, then the 100 domains again.
    // Rows are told apart by their session.
    const spread = (round: number) =>
      Array.from({ length: 100 }, (_, d) => ({
        ...pageview,
        domain: `d${d}.test`,
        session_id: `r${round}-${d}`,
        timestamp: '2026-03-01T10:00:00Z',
      }));
    const one = Array.from({ length: 100 }, (_, i) => ({
      ...pageview,
      domain: 'd7.test',
      session_id: `one-${i}`,
      timestamp: `2026-03-01T11:${String(i % 60).padStart(2, '0')}:00Z`,
    }));
    const rows = [...spread(0), ...one, ...spread(1)];
    const paths = localPaths(tempDir());
    const report = await importEvents(rows, paths, { batchRows: 100 });
    expect(report.files).toBe(100);
    const stored = await queryParquet(
      `SELECT domain, session_id FROM read_parquet(${sqlPath(join(paths.eventsDir, '*', '*', '*.parquet'))}, hive_partitioning = true) ORDER BY ALL`,
    );
    expect(stored).toEqual(
      rows
        .map((r) => ({ domain: r.domain, session_id: r.session_id }))
        .sort((a, b) => (a.domain + a.session_id < b.domain + b.session_id ? -1 : 1)),
    );
  });

  it('orders a file by type, event, session, then time, whatever the order of the lines and batches', async () => {
    const rows = [
      { ...pageview, session_id: 's2', timestamp: '2026-03-01T10:01:00Z' },
      { ...revenue, timestamp: '2026-03-01T09:00:00Z' },
      { ...event, event_name: 'signup', timestamp: '2026-03-01T10:00:00Z' },
      { ...pageview, session_id: 's1', timestamp: '2026-03-01T10:05:00Z' },
      { ...auto, timestamp: '2026-03-01T12:00:00Z' },
      { ...pageview, session_id: 's2', timestamp: '2026-03-01T10:00:00Z' },
      { ...event, event_name: 'cart', timestamp: '2026-03-01T11:00:00Z' },
      { ...pageview, session_id: 's1', timestamp: '2026-03-01T10:02:00Z' },
    ];
    const expected = [
      'auto exit_link s1 12:00:00',
      'event cart s1 11:00:00',
      'event signup s1 10:00:00',
      'pageview  s1 10:02:00',
      'pageview  s1 10:05:00',
      'pageview  s2 10:00:00',
      'pageview  s2 10:01:00',
      'revenue   09:00:00',
    ];
    for (const batchRows of [undefined, 3]) {
      const paths = localPaths(tempDir());
      await importEvents(rows, paths, batchRows ? { batchRows } : {});
      const [file] = parquetFiles(paths.eventsDir);
      const inFile = await queryParquet(
        `SELECT concat_ws(' ', type, coalesce(event_name, ''), session_id, strftime(ts, '%H:%M:%S')) AS row FROM read_parquet(${sqlPath(join(paths.eventsDir, file!))})`,
      );
      expect(inFile.map((r) => r.row)).toEqual(expected);
    }
  });

  it('writes row groups a reader can skip: the custom events and the revenue of a day apart from its pageviews', async () => {
    const at = (i: number) => new Date(Date.UTC(2026, 2, 1) + i * 500).toISOString();
    const rows = [
      ...Array.from({ length: 150_000 }, (_, i) => ({
        ...pageview,
        visitor_id: `v${i % 900}`,
        session_id: `s${i % 3000}`,
        timestamp: at(i),
      })),
      ...Array.from({ length: 600 }, (_, i) => ({
        ...event,
        visitor_id: `v${i}`,
        session_id: `s${i}`,
        timestamp: at(i * 200),
      })),
      ...Array.from({ length: 50 }, (_, i) => ({
        ...revenue,
        visitor_id: `v${i}`,
        transaction_id: `t${i}`,
        timestamp: at(i * 3000),
      })),
    ];
    const typeStats = (file: string) =>
      queryParquet(
        `SELECT row_group_id, stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata(${sqlPath(file)}) WHERE path_in_schema = 'type' ORDER BY 1`,
      );
    const paths = localPaths(tempDir());
    await importEvents(rows, paths);
    const local = await typeStats(join(paths.eventsDir, parquetFiles(paths.eventsDir)[0]!));
    // For S3 the same rows in smaller groups: Athena bills the groups it reads.
    const s3: Record<string, unknown>[][] = [];
    await importTo(
      rows,
      s3Staged(async (staged) => {
        for (const file of staged.files) s3.push(await typeStats(join(staged.eventsDir, file)));
      }),
    );
    expect(local).toHaveLength(2);
    expect(s3).toHaveLength(1);
    expect(s3[0]).toHaveLength(Math.ceil(rows.length / 16_384));
    for (const groups of [local, s3[0]!]) {
      const holding = (type: string) => groups.filter((g) => String(g.lo) <= type && type <= String(g.hi)).length;
      expect(holding('event')).toBe(1);
      expect(holding('revenue')).toBe(1);
    }
  }, 60_000);

  it('writes nothing and leaves no staging files when the input fails part-way', async () => {
    const paths = localPaths(tempDir());
    async function* failingInput() {
      for (let minute = 0; minute < 5; minute++)
        yield JSON.stringify({ ...pageview, timestamp: `2026-03-01T10:0${minute}:00Z` });
      throw new Error('disk read error');
    }
    // batchRows 1: staged files exist when the input breaks.
    await expect(importLines(failingInput(), paths, { batchRows: 1 })).rejects.toThrow('disk read error');
    expect(parquetFiles(paths.eventsDir)).toEqual([]);
    expect(existsSync(paths.stagingDir) ? readdirSync(paths.stagingDir) : []).toEqual([]);
  });

  it('fails on an unreadable file without writing anything', async () => {
    const paths = localPaths(tempDir());
    const directory = join(tempDir(), 'a-directory.ndjson');
    mkdirSync(directory);
    await expect(importNdjson(directory, paths)).rejects.toThrow(/EISDIR/);
    await expect(importNdjson(join(tempDir(), 'missing.ndjson'), paths)).rejects.toThrow(/ENOENT/);
    expect(parquetFiles(paths.dataDir)).toEqual([]);
    expect(existsSync(paths.stagingDir) ? readdirSync(paths.stagingDir) : []).toEqual([]);
  });
});

describe('compression (writer/parquet-codec.ts)', () => {
  /** The codecs of every column chunk of the Parquet files under `dir`. */
  async function codecsUnder(dir: string): Promise<string[]> {
    const files = parquetFiles(dir).map((f) => sqlPath(join(dir, f)));
    const rows = await queryParquet(
      `SELECT DISTINCT compression FROM parquet_metadata([${files.join(', ')}]) ORDER BY 1`,
    );
    return rows.map((r) => String(r.compression));
  }
  const twoSessions = [pageview, { ...pageview, session_id: 's2', timestamp: '2026-03-01T12:00:00Z' }, event];

  it("reads one codec for every relation from ANALYTICS_PARQUET_COMPRESSION, else each relation's own, and refuses others", () => {
    expect(localCodecs({})).toEqual({
      events: 'snappy',
      sessions: 'zstd',
      pageviews: 'snappy',
      pages: 'zstd',
      visitors: 'zstd',
      custom_events: 'zstd',
    });
    expect(localCodecs({ ANALYTICS_PARQUET_COMPRESSION: ' ZSTD ' })).toEqual({
      events: 'zstd',
      sessions: 'zstd',
      pageviews: 'zstd',
      pages: 'zstd',
      visitors: 'zstd',
      custom_events: 'zstd',
      zstdLevel: S3_ZSTD_LEVEL,
    });
    expect(new Set(Object.values(localCodecs({ ANALYTICS_PARQUET_COMPRESSION: 'uncompressed' })))).toEqual(
      new Set(['uncompressed']),
    );
    expect(() => localCodecs({ ANALYTICS_PARQUET_COMPRESSION: 'gzip' })).toThrow(
      /one of uncompressed, snappy, zstd, not "gzip"/,
    );
    expect(() => localCodecs({ ANALYTICS_PARQUET_COMPRESSION: 'lz4_raw' })).toThrow(/not "lz4_raw"/);
  });

  it('writes each relation of a local store in its codec, also when keys and whole marks rewrite files, or every one in the codec asked for', async () => {
    const paths = localPaths(tempDir());
    await importEvents(twoSessions, paths);
    // A second import touching the same sessions rewrites the first's fragments (whole marks) and keys new buckets.
    await importEvents(
      [
        { ...pageview, timestamp: '2026-03-01T13:00:00Z', visitor_id: 'v9' },
        { ...event, timestamp: '2026-03-01T13:30:00Z' },
      ],
      paths,
    );
    expect(await codecsUnder(paths.eventsDir)).toEqual([DEFAULT_LOCAL_CODECS.events.toUpperCase()]);
    for (const [folder, dir] of Object.entries(paths.derivedDirs)) {
      expect(await codecsUnder(dir), folder).toEqual([DEFAULT_LOCAL_CODECS[folder as DerivedFolder].toUpperCase()]);
    }

    const saved = process.env.ANALYTICS_PARQUET_COMPRESSION;
    process.env.ANALYTICS_PARQUET_COMPRESSION = 'zstd';
    try {
      const zstd = localPaths(tempDir());
      await importEvents(twoSessions, zstd);
      for (const dir of [zstd.eventsDir, ...Object.values(zstd.derivedDirs)])
        expect(await codecsUnder(dir)).toEqual(['ZSTD']);
    } finally {
      if (saved === undefined) delete process.env.ANALYTICS_PARQUET_COMPRESSION;
      else process.env.ANALYTICS_PARQUET_COMPRESSION = saved;
    }
  });

  it('writes ZSTD for S3 whatever the local setting, at its level, since Athena bills the compressed bytes it scans', async () => {
    const published: string[][] = [];
    let eventFiles: string[] = [];
    const rewritten = tempDir();
    let stagedEventBytes = 0;
    await importTo(
      generatedEvents(),
      s3Staged(async (staged) => {
        for (const dir of [staged.eventsDir, ...Object.values(staged.derivedDirs)])
          published.push(await codecsUnder(dir));
        eventFiles = parquetFiles(staged.eventsDir).map((f) => join(staged.eventsDir, f));
        stagedEventBytes = eventFiles.reduce((sum, f) => sum + statSync(f).size, 0);
        // The same partitions rewritten by the same writer, at S3's level and at ZSTD's default one (compaction).
        for (const [name, codecs] of [
          ['s3', S3_CODECS],
          ['default', { ...S3_CODECS, zstdLevel: undefined }],
        ] as const) {
          const scratch = await openScratchDuckDb();
          try {
            for (const [i, file] of eventFiles.entries()) {
              const dirs = Object.fromEntries(
                ['events', ...derivedRelations.map((r) => r.folder)].map((f) => [f, join(rewritten, name, f)]),
              ) as Record<'events' | DerivedFolder, string>;
              await writeCompacted(scratch.connection, [file], `${i}.parquet`, dirs, 's3', codecs);
            }
          } finally {
            scratch.close();
          }
        }
      }),
    );
    expect(published).toHaveLength(1 + derivedRelations.length);
    for (const codecs of published) expect(codecs).toEqual(['ZSTD']);
    expect(eventFiles.length).toBeGreaterThan(5);
    // At S3_ZSTD_LEVEL the files are smaller than at DuckDB's default level (3), relation by relation.
    const bytes = (name: string, folder: string) =>
      parquetFiles(join(rewritten, name, folder)).reduce(
        (sum, f) => sum + statSync(join(rewritten, name, folder, f)).size,
        0,
      );
    for (const folder of ['events', ...derivedRelations.map((r) => r.folder)])
      expect(bytes('s3', folder), folder).toBeLessThan(bytes('default', folder));
    // The ingest's event files are the bytes a rewrite at S3's level gives.
    expect(stagedEventBytes).toBe(bytes('s3', 'events'));
    expect(localCodecs({ ANALYTICS_PARQUET_COMPRESSION: 'zstd' }).zstdLevel).toBe(S3_ZSTD_LEVEL);
    expect(localCodecs({}).zstdLevel).toBeUndefined();
  });

  it("writes a local store at S3's level in every writer when ANALYTICS_PARQUET_COMPRESSION is zstd, compaction too", async () => {
    const paths = localPaths(tempDir());
    const scratch = await openScratchDuckDb();
    const out = tempDir();
    // Session-fragment twins are written as fragments are.
    const rewrite = (folder: string, file: string, level: number | undefined) =>
      rewriteAsWriters(
        scratch.connection,
        (folder in paths.twinDirs ? 'sessions' : folder) as 'events' | DerivedFolder,
        'local',
        file,
        join(out, `${folder}-${level ?? 'default'}.parquet`),
        level,
      );
    // Every file of the store is the bytes its rewrite by the writers' COPY gives at S3's level; in every folder, some file differs at
    // DuckDB's default level (3), so a writer at another level would show.
    const expectAtS3Level = async (stage: string) => {
      const dirs = { events: paths.eventsDir, ...paths.derivedDirs, ...paths.twinDirs };
      for (const [folder, dir] of Object.entries(dirs)) {
        const written = parquetFiles(dir);
        expect(written.length, `${stage}: ${folder}`).toBeGreaterThan(0);
        let differing = 0;
        for (const name of written) {
          const bytes = readFileSync(join(dir, name));
          const what = `${stage}: ${folder} ${name}`;
          expect((await rewrite(folder, join(dir, name), S3_ZSTD_LEVEL)).equals(bytes), what).toBe(true);
          if (!(await rewrite(folder, join(dir, name), undefined)).equals(bytes)) differing += 1;
        }
        expect(differing, `${stage}: ${folder}`).toBeGreaterThan(0);
      }
    };
    const saved = process.env.ANALYTICS_PARQUET_COMPRESSION;
    process.env.ANALYTICS_PARQUET_COMPRESSION = 'zstd';
    try {
      // Ten imports of two days (the importer's files, keyed and marked), then the upgrade and compaction that
      // `npm start` runs, which rewrites every partition of ten files.
      const events = generatedEvents().filter((e) =>
        /^2026-03-0[12]/.test(String((e as { timestamp: unknown }).timestamp)),
      );
      for (let i = 0; i < 10; i++)
        await importEvents(
          events.filter((_, j) => j % 10 === i),
          paths,
        );
      await expectAtS3Level('imported');
      await backfillDerived(paths);
      expect(parquetFiles(paths.eventsDir).filter((f) => f.includes('compacted-'))).toHaveLength(2);
      await expectAtS3Level('compacted');
    } finally {
      scratch.close();
      if (saved === undefined) delete process.env.ANALYTICS_PARQUET_COMPRESSION;
      else process.env.ANALYTICS_PARQUET_COMPRESSION = saved;
    }
  });
});

it("adds imported rows to each domain's usage counter of the month", async () => {
  const before = await readUsage('usage.test');
  await importEvents(
    [
      { ...pageview, domain: 'usage.test' },
      { ...revenue, domain: 'usage.test' },
      { ...pageview, domain: 'usage.test', type: 'bogus' },
    ],
    localPaths(tempDir()),
  );
  expect((await readUsage('usage.test')) - before).toBe(2);
});

describe('visitor keys and whole marks given while writing', () => {
  // A local import keys its buckets and marks its fragments before it takes the store lock; another writer may
  // publish in between, and the store must come out as if the two had run one after the other.
  const day = (hour: number, minute = 0) =>
    `2026-03-0${1 + Math.floor(hour / 24)}T${String(hour % 24).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00Z`;
  const session = (visitor: string, id: string, hour: number, rows = 2) =>
    Array.from({ length: rows }, (_, i) => ({
      ...pageview,
      visitor_id: visitor,
      session_id: id,
      timestamp: day(hour, i * 5),
      url_path: `/p${i}`,
    }));
  const range = (prefix: string, from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => `${prefix}${from + i}`);

  const scanOf = (paths: LocalPaths, folder: DerivedFolder) =>
    `read_parquet(${sqlPath(join(paths.derivedDirs[folder], '*', '*', '*.parquet'))}, hive_partitioning = true)`;

  async function expectKeysExact(paths: LocalPaths): Promise<void> {
    const scan = (folder: DerivedFolder) => scanOf(paths, folder);
    const [keys] = await queryParquet(
      `SELECT count(*) FILTER (WHERE visitor_key IS NULL) AS unkeyed, count(DISTINCT visitor_id) AS visitors, count(DISTINCT visitor_key) AS keys,
              count(DISTINCT (visitor_id, visitor_key)) AS pairs FROM ${scan('pageviews')}`,
    );
    expect(keys).toEqual({ unkeyed: '0', visitors: keys!.keys, keys: keys!.keys, pairs: keys!.keys });
    const [pages] = await queryParquet(
      `SELECT count(*) AS different FROM (SELECT DISTINCT visitor_id, visitor_key FROM ${scan('pages')}) p
         LEFT JOIN (SELECT DISTINCT visitor_id, visitor_key FROM ${scan('pageviews')}) v USING (visitor_id) WHERE p.visitor_key IS DISTINCT FROM v.visitor_key`,
    );
    expect(pages!.different).toBe('0');
  }

  async function expectKeysAndMarksExact(paths: LocalPaths): Promise<void> {
    await expectKeysExact(paths);
    const [marks] = await queryParquet(
      `SELECT count(*) FILTER (WHERE whole <> (n = 1)) AS wrong, count(*) FILTER (WHERE whole) AS marked, count(*) FILTER (WHERE n > 1) AS split
         FROM (SELECT whole, count(*) OVER (PARTITION BY domain, session_id) AS n FROM ${scanOf(paths, 'sessions')})`,
    );
    expect(marks!.wrong).toBe('0');
    expect(Number(marks!.marked)).toBeGreaterThan(20);
    expect(Number(marks!.split)).toBeGreaterThan(4);
    // Every fragment file in its order (fragmentFileOrder), however it was written: the unmarked ones, then the
    // whole ones, each by first time.
    const [order] = await queryParquet(
      `SELECT count(*) FILTER (WHERE previous_whole AND NOT whole OR previous_whole = whole AND first_ts < previous_ts) AS disordered,
              count(*) FILTER (WHERE NOT previous_whole AND whole) AS runs
         FROM (SELECT whole, first_ts, lag(whole) OVER w AS previous_whole, lag(first_ts) OVER w AS previous_ts
                 FROM read_parquet(${sqlPath(join(paths.derivedDirs.sessions, '*', '*', '*.parquet'))}, filename = true, file_row_number = true)
                 WINDOW w AS (PARTITION BY filename ORDER BY file_row_number))`,
    );
    expect(order!.disordered).toBe('0');
    expect(Number(order!.runs)).toBeGreaterThan(0);
  }

  it('are given by the import to the files it writes, before any pass over the store: a session over two of its days not whole', async () => {
    const paths = localPaths(tempDir());
    const night = session('a1', 'night', 23).map((row, i) => ({
      ...row,
      timestamp: i ? '2026-03-02T00:10:00Z' : '2026-03-01T23:50:00Z',
    }));
    // a2 sends only a custom event: no pageview, so no key.
    const rows = [
      ...session('a0', 'within', 3),
      ...night,
      { ...pageview, type: 'event', event_name: 'signup', visitor_id: 'a2', session_id: 'custom', timestamp: day(5) },
    ];
    const staged = (folder: DerivedFolder) =>
      `read_parquet(${sqlPath(join(paths.stagingDir, '*', folder, '*', '*', '*.parquet'))})`;
    let fragments: Record<string, unknown>[] = [];
    let keys: Record<string, unknown>[] = [];
    await importEvents(rows, paths, {
      onStage: async (stage) => {
        if (stage !== 'write partitions') return;
        fragments = await queryParquet(`SELECT session_id, whole FROM ${staged('sessions')} ORDER BY ALL`);
        keys = await queryParquet(
          `SELECT visitor_id, count(DISTINCT visitor_key) AS keys, count(*) FILTER (WHERE visitor_key IS NULL) AS unkeyed FROM ${staged('pageviews')} GROUP BY ALL ORDER BY ALL`,
        );
      },
    });
    expect(fragments).toEqual([
      { session_id: 'custom', whole: true },
      { session_id: 'night', whole: false },
      { session_id: 'night', whole: false },
      { session_id: 'within', whole: true },
    ]);
    expect(keys).toEqual([
      { visitor_id: 'a0', keys: '1', unkeyed: '0' },
      { visitor_id: 'a1', keys: '1', unkeyed: '0' },
    ]);
  });

  it("come out exact when another import publishes between an import's writing and its publishing", async () => {
    const paths = localPaths(tempDir());
    await importEvents(
      range('a', 0, 20).flatMap((v, i) => session(v, `sa${i}`, i)),
      paths,
    );
    // B and C share visitors with A and each other, each brings new ones, and each extends sessions of the other
    // two (a session over two imports is not whole; one over midnight has two fragments in one import).
    const b = [...range('a', 0, 10), ...range('b', 0, 10)].flatMap((v, i) => session(v, `sb${i}`, 30 + i));
    b.push(
      ...session('a1', 'sa1', 1),
      ...session('b0', 'sb-night', 23).map((row, i) => ({
        ...row,
        timestamp: i ? '2026-03-02T00:10:00Z' : '2026-03-01T23:50:00Z',
      })),
    );
    const c = [...range('a', 5, 15), ...range('c', 0, 10)].flatMap((v, i) => session(v, `sc${i}`, 30 + i));
    c.push(...session('a2', 'sa2', 2), ...session('b1', 'sb1', 31));
    // Dev and not dev rows of one session: two fragments in one file.
    c.push(...session('c0', 'sc-dev', 40).map((row, i) => ({ ...row, is_dev: i === 0 })));
    let interleaved = false;
    await importEvents(b, paths, {
      onStage: async (stage) => {
        if (stage !== 'write partitions') return;
        await importEvents(c, paths);
        interleaved = true;
      },
    });
    expect(interleaved).toBe(true);
    await expectKeysAndMarksExact(paths);

    // The same imports one after the other: the keys and marks each import gives hold, and the store is as exact.
    const serial = localPaths(tempDir());
    await importEvents(
      range('a', 0, 20).flatMap((v, i) => session(v, `sa${i}`, i)),
      serial,
    );
    await importEvents(b, serial);
    await importEvents(c, serial);
    await expectKeysAndMarksExact(serial);
  });

  it("key stored buckets without keys after the import's own, so no key is given twice", async () => {
    const paths = localPaths(tempDir());
    await importEvents(
      range('a', 0, 20).flatMap((v, i) => session(v, `sa${i}`, i)),
      paths,
    );
    // Buckets written but never keyed (a writer stopped before its keying pass): NULL keys, the column kept.
    for (const folder of ['pageviews', 'pages'] as const) {
      for (const name of parquetFiles(paths.derivedDirs[folder]).slice(0, 10)) {
        const file = join(paths.derivedDirs[folder], name);
        await queryParquet(
          `COPY (SELECT * REPLACE (CAST(NULL AS BIGINT) AS visitor_key) FROM read_parquet(${sqlPath(file)})) TO ${sqlPath(`${file}.tmp`)} (FORMAT parquet)`,
        );
        renameSync(`${file}.tmp`, file);
      }
    }
    await importEvents(
      [...range('a', 15, 20), ...range('d', 0, 10)].flatMap((v, i) => session(v, `sd${i}`, 30 + i)),
      paths,
    );
    await expectKeysExact(paths);
  });
});

describe('npm run import (child process)', () => {
  it('prints what it echoes of a file with its control characters escaped: a line cannot forge output or drive the terminal', async () => {
    const hostile = '\u001b]0;pwned\u0007\u001b[2J\nfake.ndjson:1: imported fine\u202e';
    const file = writeNdjson([
      { ...pageview, domain: 'cli.test', event_properties: { [hostile]: 'x' }, type: 'event', event_name: 'signup' },
      { ...pageview, domain: hostile },
      { ...pageview, type: hostile },
    ]);
    const result = await runCli('cli/import-cli.ts', [file], { ANALYTICS_DATA_DIR: api.paths.dataDir });
    expect(result.code).toBe(1);
    const echoed = result.stdout
      .split('\n')
      .filter((l) => l.startsWith(`${file}:`) && /:\d+: /.test(l.slice(file.length)));
    expect(echoed).toHaveLength(3);
    // eslint-disable-next-line no-control-regex -- no control character may reach the terminal
    expect(result.stdout + result.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/);
    expect(result.stdout).not.toMatch(/^fake\.ndjson/m);
    expect(result.stdout).toContain('\\u001b');
  });

  it('imports while the API holds the local DynamoDB, prints rejects as FILE:LINE and exits 1', async () => {
    const token = (await api.createKey({ domains: ['cli.test'] })).token;
    const good = writeNdjson([
      { ...pageview, domain: 'cli.test' },
      'oops',
      { ...pageview, domain: 'cli.test', visitor_id: 'v2' },
    ]);
    const missing = join(tempDir(), 'missing.ndjson');
    const usageBefore = await readUsage('cli.test');

    const result = await runCli('cli/import-cli.ts', [good, missing], { ANALYTICS_DATA_DIR: api.paths.dataDir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`${good}:2: not valid JSON`);
    expect(result.stdout).toContain(`${good}: 2 rows written (cli.test 2), 1 rejected`);
    expect(result.stderr).toContain(`${missing}: cannot import: ENOENT`);
    expect(result.stderr).not.toMatch(/\n\s+at /); // a message, no stack
    expect(await readUsage('cli.test')).toBe(usageBefore + 2); // counted on the DynamoDB the API serves

    // The running API reads the new files at once.
    const res = await api.request('POST', '/v1/query', {
      token,
      body: { metrics: ['pageviews', 'visitors'], date_range: ['2026-03-01', '2026-03-01'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data[0].metrics).toEqual({ pageviews: 2, visitors: 2 });
  });

  it('exits 0 on a clean file and 2 without files', async () => {
    const dataDir = tempDir();
    const [clean, noFiles] = await Promise.all([
      runCli('cli/import-cli.ts', [writeNdjson([pageview, revenue])], { ANALYTICS_DATA_DIR: dataDir }),
      runCli('cli/import-cli.ts', [], { ANALYTICS_DATA_DIR: dataDir }),
    ]);
    expect(clean).toMatchObject({ code: 0, stderr: '' });
    expect(clean.stdout).toMatch(/: 2 rows written \(shop.test 2\), 0 rejected\n$/);
    expect(parquetFiles(join(dataDir, 'current', 'events'))).toHaveLength(1);
    expect(noFiles.code).toBe(2);
    expect(noFiles.stderr).toContain('usage: npm run import --');
  });
});
