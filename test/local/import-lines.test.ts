import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLineBlocks, importNdjson } from '../../local/store/local-destination.js';
import { MAX_LINE_BYTES, readLines } from '../../writer/ndjson-lines.js';
import { localPaths } from '../../local/store/paths.js';
import { eventColumns } from '../../shared/events/event-columns.js';
import { queryParquet, sqlPath } from '../support/parquet-rows.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// How the importer reads a file: its lines against a plain reading of the bytes (whatever falls on the reader's
// chunk boundaries), and the same file checked on worker threads or on one thread giving the same report and rows.

const dir = mkdtempSync(join(tmpdir(), 'import-lines-'));
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi(); // DynamoDB for usage counters
});
afterAll(async () => {
  await api?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The rule in docs/EVENT-FORMAT.md, read off whole bytes: LF ends a line, a CR before it goes, strict UTF-8, a size limit. */
function plainLines(bytes: Buffer): (string | { reason: string })[] {
  const body = bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])) ? bytes.subarray(3) : bytes;
  const parts: Buffer[] = [];
  for (let from = 0; from < body.length;) {
    const end = body.indexOf(0x0a, from) === -1 ? body.length : body.indexOf(0x0a, from);
    parts.push(body.subarray(from, end));
    from = end + 1;
  }
  return parts.map((part) => {
    if (part.length > MAX_LINE_BYTES + 1) return { reason: `line longer than ${MAX_LINE_BYTES} bytes` };
    const text = part.at(-1) === 0x0d ? part.subarray(0, -1) : part;
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(text);
    } catch {
      return { reason: 'not valid UTF-8' };
    }
  });
}

async function linesOf(file: string) {
  const out = [];
  for await (const line of readLines(file)) out.push(line);
  return out;
}

describe('reading lines', () => {
  it("splits any file as a plain reading of its bytes does, across the reader's 1 MiB chunks", async () => {
    const piece = fc.oneof(
      fc.constantFrom('\n', '\r\n', '\r', 'é', '\u{1F600}', '{"a":1}'),
      fc.constantFrom(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xef, 0xbb, 0xbf])),
      fc.integer({ min: 1, max: 700_000 }).map((n) => 'x'.repeat(n)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 12 }), async (pieces) => {
        const bytes = Buffer.concat(pieces.map((p) => (typeof p === 'string' ? Buffer.from(p) : p)));
        const file = join(dir, 'lines.ndjson');
        writeFileSync(file, bytes);
        expect(await linesOf(file)).toEqual(plainLines(bytes));
      }),
      { numRuns: 60 },
    );
  });

  it('refuses lines past the limit, whether one chunk holds them or several, and keeps those at it', async () => {
    const file = join(dir, 'long.ndjson');
    const bytes = Buffer.from(
      [
        'a',
        'b'.repeat(MAX_LINE_BYTES + 1),
        'c'.repeat(MAX_LINE_BYTES + 2),
        'd'.repeat(3 * MAX_LINE_BYTES),
        `${'e'.repeat(MAX_LINE_BYTES)}\r`,
        'f',
      ].join('\n'),
    );
    writeFileSync(file, bytes);
    const lines = await linesOf(file);
    expect(lines).toEqual(plainLines(bytes));
    expect(lines.map((line) => (typeof line === 'string' ? line.length : line.reason))).toEqual([
      1,
      MAX_LINE_BYTES + 1,
      'line longer than 1048576 bytes',
      'line longer than 1048576 bytes',
      MAX_LINE_BYTES,
      1,
    ]);
  });
});

describe('checking on worker threads', () => {
  it('gives the report and the stored rows of checking on one thread, for a file of many blocks or the same bytes given in blocks', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) {
      const day = String(1 + (i % 5)).padStart(2, '0');
      const event = {
        domain: i % 7 === 0 ? 'b.test' : 'a.test',
        timestamp: `2026-03-${day}T10:${String(i % 60).padStart(2, '0')}:00.${String(i % 1000).padStart(3, '0')}Z`,
        type: 'pageview',
        visitor_id: `v${i % 900}`,
        session_id: `s${i % 2000}`,
        url_path: `/p/${i % 37}`,
        referrer: i % 3 ? 'https://www.example.com/x' : null,
        scroll_depth: i % 101,
        padding: 'z'.repeat(i % 200),
      };
      if (i % 1000 === 17) lines.push('{"domain": "a.test",');
      else if (i % 1000 === 500) lines.push('');
      else if (i % 1000 === 900) lines.push(JSON.stringify({ ...event, type: 'click' }));
      else lines.push(JSON.stringify(event));
    }
    const file = join(dir, 'many-blocks.ndjson');
    writeFileSync(file, `${lines.join('\r\n')}\n`);
    const threads = localPaths(join(dir, 'threads'));
    const one = localPaths(join(dir, 'one'));
    const onThreads = await importNdjson(file, threads, { checkWorkers: 2, batchRows: 7000 });
    const onOne = await importNdjson(file, one, { checkWorkers: 0 });
    expect(onThreads).toEqual(onOne);
    expect(onThreads.rejected.length).toBe(60);
    expect(onThreads.rejected.slice(0, 2)).toEqual([
      { line: 18, reason: expect.stringMatching(/^not valid JSON/) },
      { line: 901, reason: expect.stringMatching(/^unknown type "click"/) },
    ]);
    const rows = async (root: string) =>
      queryParquet(
        `SELECT ${eventColumns.map(([name]) => name).join(', ')}, filename[length(${sqlPath(root)}) + 1:] AS file FROM read_parquet(${sqlPath(`${root}/**/*.parquet`)}, filename = true) ORDER BY ALL`,
      );
    // The same bytes given as blocks of whole lines (as the bench's generator gives them), cut elsewhere.
    const given = localPaths(join(dir, 'given'));
    async function* blocks() {
      const bytes = Buffer.from(`${lines.join('\r\n')}\n`);
      for (let from = 0; from < bytes.length;) {
        const end = bytes.indexOf(0x0a, from + 50_000);
        const to = end === -1 ? bytes.length : end + 1;
        yield bytes.subarray(from, to);
        from = to;
      }
    }
    expect(await importLineBlocks(blocks(), given, { batchRows: 5000 })).toEqual(onOne);
    const [a, b, c] = [await rows(threads.eventsDir), await rows(one.eventsDir), await rows(given.eventsDir)];
    expect(a.length).toBe(onOne.rowsWritten);
    const byPartition = (r: Record<string, unknown>[]) =>
      r.map(({ file, ...row }) => ({ ...row, partition: String(file).split('/').slice(1, 3).join('/') }));
    expect(byPartition(a)).toEqual(byPartition(b));
    expect(byPartition(c)).toEqual(byPartition(b));
  });
});
