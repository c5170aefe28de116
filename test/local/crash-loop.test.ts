import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DuckDbEngine } from '../../shared/engines/duckdb-engine.js';
import { readUsage } from '../../shared/limits/limiter.js';
import { printAnalyticsQuery } from '../../shared/query/analytics/print.js';
import { planAnalyticsQuery } from '../../shared/query/analytics/plan.js';
import { localCatalog } from '../../shared/query/sql/catalog.js';
import { localTarget } from '../../shared/query/sql/target.js';
import { openLocalDynamo } from '../../local/server/local-dynamo.js';
import { localPaths, type LocalPaths } from '../../local/store/paths.js';
import { parquetFilesUnder } from '../../writer/parquet-files.js';
import { domain, generatedEvents, queryOf, random as seededRandom } from '../support/generated-sessions.js';

// The store's failure model (docs/SECURITY.md): whatever moment a process dies, what readers see is the store before
// or after the interrupted operation, never a state in between, and nothing is counted twice. Each round starts an
// import (a new file, or one imported before), a backfill with its compaction, or a server (whose start runs the
// backfill), kills it with SIGKILL after a random delay, checks the answers, then runs the same operation to
// completion and checks them again. CRASH_ROUNDS sets the rounds (50 for the full loop).

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 12);
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

let dataDir: string;
let paths: LocalPaths;
const files: string[] = [];
const rowsOf = new Map<string, number>();

/** Queries that read every relation: raw rows, fragments (bounce rate), buckets (visitors) and their agreement. */
const questions = [
  queryOf(['visitors', 'pageviews', 'bounce_rate', 'avg_session_duration'], {
    dimensions: [],
    filters: [],
    timeZone: 'UTC',
    range: ['2026-02-28', '2026-03-12'],
  }),
  queryOf(['visitors', 'bounce_rate'], {
    dimensions: ['date'],
    filters: [],
    timeZone: 'Europe/Berlin',
    range: ['2026-03-01', '2026-03-10'],
  }),
  queryOf(['pageviews', 'bounce_rate'], {
    dimensions: ['page'],
    filters: [{ field: 'page', operator: 'contains', value: '/p' }],
    timeZone: 'UTC',
    range: ['2026-03-01', '2026-03-10'],
  }),
];

async function answers(): Promise<string> {
  const engine = await DuckDbEngine.open(paths.eventsDir);
  try {
    const out: unknown[] = [(await engine.runRaw(`SELECT count(*) AS n FROM events`))[0]];
    for (const query of questions) {
      const derived = (await engine.run(printAnalyticsQuery(planAnalyticsQuery(query, localCatalog), localTarget)))
        .rows;
      const raw = (
        await engine.run(
          printAnalyticsQuery(
            planAnalyticsQuery(query, localCatalog, {
              sessionFragments: false,
              pageviewBuckets: false,
              customEventBuckets: false,
            }),
            localTarget,
          ),
        )
      ).rows;
      // The derived relations always agree with the rows they were derived from: no half-published state.
      expect(derived).toEqual(raw);
      out.push(derived);
    }
    return JSON.stringify(out);
  } finally {
    engine.close();
  }
}

/** Partitions of the current snapshot holding two event files or more. */
function crowdedPartitions(): number {
  const perPartition = new Map<string, number>();
  for (const name of parquetFilesUnder(paths.eventsDir)) {
    const partition = dirname(name);
    perPartition.set(partition, (perPartition.get(partition) ?? 0) + 1);
  }
  return [...perPartition.values()].filter((n) => n >= 2).length;
}

async function usage(): Promise<number> {
  const dynamo = await openLocalDynamo(paths, { publish: false });
  try {
    return await readUsage(domain);
  } finally {
    await dynamo.close();
  }
}

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ANALYTICS_DATA_DIR: dataDir, ANALYTICS_DEMO: '0', PORT: '0', ...env },
    stdio: 'ignore',
  });
}

function finished(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

type Operation = { name: string; args: string[]; env?: Record<string, string>; server?: true };

/** Rounds cycle: a new file, another new file, an earlier file again, the backfill with its compaction, a server. */
function operation(round: number, newFiles: number): Operation {
  const kind = round % 5;
  if (kind <= 1 && newFiles < files.length)
    return { name: `import of file ${newFiles}`, args: ['cli/import-cli.ts', files[newFiles]!] };
  if (kind <= 2)
    return { name: `import of file ${round % newFiles} again`, args: ['cli/import-cli.ts', files[round % newFiles]!] };
  if (kind === 3)
    return {
      name: 'compaction and backfill',
      args: ['cli/backfill-cli.ts'],
      env: { ANALYTICS_COMPACT_FROM_FILES: '2' },
    };
  return {
    name: 'a server starting (it compacts once it listens)',
    args: ['cli/start.ts'],
    env: { ANALYTICS_COMPACT_FROM_FILES: '2' },
    server: true,
  };
}

/**
 * Runs `op` to completion: a command until it exits; a server until it listens and has compacted every partition
 * of two files or more (ANALYTICS_COMPACT_FROM_FILES=2), then stopped with Ctrl-C.
 */
async function complete(op: Operation): Promise<number | null> {
  if (!op.server) return finished(start(op.args, op.env));
  const child = spawn(process.execPath, ['--import', 'tsx', ...op.args], {
    cwd: repoRoot,
    env: { ...process.env, ANALYTICS_DATA_DIR: dataDir, ANALYTICS_DEMO: '0', PORT: '0', ...op.env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('listening on')) resolve();
    });
    child.once('exit', () => reject(new Error(`the server exited before it listened: ${out}`)));
  });
  await vi.waitFor(() => expect(crowdedPartitions()).toBe(0), { timeout: 120_000, interval: 250 });
  child.kill('SIGINT');
  return finished(child);
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'crash-loop-'));
  paths = localPaths(dataDir);
  // Small files of generated sessions, each a new import: their sessions overlap, so whole marks change.
  const events = generatedEvents() as Record<string, unknown>[];
  const size = Math.ceil(events.length / Math.max(2, ROUNDS));
  for (let i = 0; i * size < events.length; i++) {
    const file = join(dataDir, `part-${i}.ndjson`);
    const slice = events.slice(i * size, (i + 1) * size);
    writeFileSync(file, slice.map((e) => JSON.stringify(e)).join('\n'));
    files.push(file);
    rowsOf.set(file, slice.length);
  }
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the store under SIGKILL', () => {
  it(`answers as before or after every interrupted operation, and counts nothing twice (${ROUNDS} rounds)`, async () => {
    // Deterministic delays, so a failing round reproduces.
    const random = seededRandom(31);
    let expectedUsage = 0;
    const imported = new Set<string>();
    let interruptedAfter = 0;
    // Kills land anywhere in an operation's life, however fast this machine runs it: the delay is a random share
    // (up to 1.2) of the longest time the same kind of operation took to complete.
    const lasted = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const op = operation(round, imported.size);
      const kind = op.args[0]!;
      const before = await answers();
      const child = start(op.args, op.env);
      await new Promise((resolve) => setTimeout(resolve, random() * 1.2 * (lasted.get(kind) ?? 2_500)));
      child.kill('SIGKILL');
      await finished(child);
      const interrupted = await answers();

      // Done again, to completion: the natural recovery.
      const started = Date.now();
      const code = await complete(op);
      lasted.set(kind, Math.max(lasted.get(kind) ?? 0, Date.now() - started));
      expect(code, `round ${round}: ${op.name} after the kill`).toBe(0);
      const after = await answers();
      expect([before, after], `round ${round}: ${op.name}`).toContain(interrupted);
      if (interrupted === after && before !== after) interruptedAfter += 1;

      if (op.args[0] === 'cli/import-cli.ts' && !imported.has(op.args[1]!)) {
        imported.add(op.args[1]!);
        expectedUsage += rowsOf.get(op.args[1]!)!;
      }
      expect(await usage(), `round ${round}: usage after ${op.name}`).toBe(expectedUsage);
    }
    const total = [...imported].reduce((n, f) => n + rowsOf.get(f)!, 0);
    expect(JSON.parse(await answers())[0].n).toBe(total);
    // Some kills landed after the publish: both sides of the invariant were exercised.
    expect(interruptedAfter).toBeGreaterThan(0);
  }, 900_000);
});
