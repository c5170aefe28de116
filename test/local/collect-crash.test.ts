import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, listening } from '../../bench/npm-start.js';
import { queryParquet, sqlPath } from '../support/parquet-rows.js';
import { runCli } from '../support/run-cli.js';

// The collector's local sink under SIGKILL (docs/COLLECTING.md, "Locally"): `npm start`'s server (cli/start.ts) takes
// events from concurrent clients and is killed at a random moment, several times, then started again on the same data
// folder. Every event it answered 202 must be stored exactly once at the end; an event in flight at a kill (answered
// nothing) may be stored or not, but never twice; no batch file is left behind.

const ROUNDS = Number(process.env.COLLECT_CRASH_ROUNDS ?? 4);
const SITE = 'crash.test';
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'collect-crash-'));
let port: number;
let server: ChildProcess | undefined;

afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

async function startServer(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/start.ts'], {
    cwd: repoRoot,
    env: { ...process.env, ANALYTICS_DATA_DIR: dataDir, PORT: String(port), COLLECT_RATE_LIMIT_PER_MINUTE: '1000000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  await listening(child, port);
  return child;
}

describe('collected events under SIGKILL', () => {
  it(`stores every answered event exactly once across ${ROUNDS} kills`, { timeout: 300_000 }, async () => {
    port = await freePort();
    server = await startServer();
    expect((await runCli('cli/keys-cli.ts', ['create', '--domain', SITE], { ANALYTICS_DATA_DIR: dataDir })).code).toBe(
      0,
    );
    const acked = new Set<number>();
    let next = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      let stop = false;
      const send = async () => {
        while (!stop) {
          const id = next++;
          try {
            const res = await fetch(`http://127.0.0.1:${port}/api/event`, {
              method: 'POST',
              headers: {
                'user-agent': `Mozilla/5.0 (X11; Linux x86_64; rv:${id % 50}.0) Gecko/20100101 Firefox/133.0`,
              },
              body: JSON.stringify({ n: 'pageview', u: `https://${SITE}/p/${id % 7}`, d: SITE, p: { id: String(id) } }),
            });
            await res.arrayBuffer();
            if (res.status === 202) acked.add(id);
          } catch {
            // the server was killed: this event was answered nothing
          }
        }
      };
      const clients = Array.from({ length: 8 }, send);
      // Long enough for batches to be closed and imported (every 2 s), killed at a random moment of one.
      await new Promise((done) => setTimeout(done, 2_500 + Math.random() * 2_500));
      if (round < ROUNDS) {
        const exited = new Promise((done) => server!.once('exit', done));
        server.kill('SIGKILL');
        stop = true;
        await Promise.all(clients);
        await exited;
        server = await startServer();
      } else {
        stop = true;
        await Promise.all(clients);
      }
    }
    // A clean stop imports the open batch before the process ends.
    const exited = new Promise((done) => server!.once('exit', done));
    server.kill('SIGTERM');
    await exited;
    server = undefined;
    expect(
      readdirSync(join(dataDir, 'collected')).filter((f) => f.endsWith('.ndjson') || f.startsWith('.open-')),
    ).toEqual([]);

    const rows = await queryParquet(
      `SELECT json_extract_string(event_properties, '$.id') AS id, count(*) AS n
       FROM read_parquet(${sqlPath(join(dataDir, 'current', 'events', `domain=${SITE}`, '*', '*.parquet'))})
       GROUP BY ALL`,
    );
    const stored = new Map(rows.map((r) => [Number(r.id), Number(r.n)]));
    expect(
      [...acked].filter((id) => !stored.has(id)),
      'answered 202 and lost',
    ).toEqual([]);
    expect(
      [...stored].filter(([, n]) => n > 1),
      'stored twice',
    ).toEqual([]);
    expect(acked.size).toBeGreaterThan(100);
    console.info(`collect crash: ${acked.size} events answered 202 over ${ROUNDS} kills; ${stored.size} stored`);
  });
});
