import './env.js';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { freePort, listening, spawnNpmStart } from './npm-start.js';

// `npm run bench:collect`: POST /api/event under load on `npm start`, with a `kill -9` of the server in the middle.
// Starts the real command on a fresh data folder, makes a key for the load's site, and sends pageviews from
// `--clients` concurrent clients for `--seconds`, each with a unique id in its properties and one of many visitors.
// At a random moment of the middle half it kills the server's process group with SIGKILL (noting whether a batch was
// being imported then), starts it again on the same folder, and goes on sending. Then it counts the stored rows by id:
// every event answered 202 must be stored exactly once (0 lost, 0 doubled); events in flight at the kill, answered
// nothing, may be stored or not. Exit code 1 otherwise.
//   npm run bench:collect -- [--seconds 30] [--clients 32]

const { values: flags } = parseArgs({
  options: { seconds: { type: 'string', default: '30' }, clients: { type: 'string', default: '32' } },
});
const seconds = Number(flags.seconds);
const clients = Number(flags.clients);
const projectRoot = resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'bench-collect-'));
const SITE = 'load.test';
const log = (message: string) => console.error(message);

const port = await freePort();
const env = { ANALYTICS_DATA_DIR: dataDir, PORT: String(port), COLLECT_RATE_LIMIT_PER_MINUTE: '1000000' };
const start = async () => {
  const child = spawnNpmStart(projectRoot, env);
  const started = performance.now();
  await listening(child, port);
  log(`npm start listening after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return child;
};

let server = await start();
await promisify(execFile)('npm', ['run', 'keys', '--', 'create', '--domain', SITE, '--json'], {
  cwd: projectRoot,
  env: { ...process.env, ...env },
});

const acked = new Set<number>();
let sent = 0;
let failed = 0;
let refused = 0;
let next = 0;
const deadline = performance.now() + seconds * 1000;
const killAt = performance.now() + seconds * 1000 * (0.25 + Math.random() * 0.5);
let kill: { atSeconds: number; batchImporting: boolean; readyBatches: number; openBatches: number } | undefined;
let restarting: Promise<void> | undefined;
let down = 0;

const agents = Array.from(
  { length: 200 },
  (_, i) => `Mozilla/5.0 (X11; Linux x86_64; rv:${100 + i}.0) Gecko/20100101 Firefox/${100 + i}.0`,
);

async function client(): Promise<void> {
  while (performance.now() < deadline) {
    if (restarting) {
      await restarting;
      continue;
    }
    const id = next++;
    sent++;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/event`, {
        method: 'POST',
        headers: {
          'content-type': 'text/plain',
          'user-agent': agents[id % agents.length]!,
          'x-forwarded-for': `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id % 50}`,
        },
        body: JSON.stringify({ n: 'pageview', u: `https://${SITE}/page/${id % 97}`, d: SITE, p: { id: String(id) } }),
      });
      await res.arrayBuffer();
      if (res.status === 202) acked.add(id);
      else refused++;
    } catch {
      failed++;
    }
  }
}

async function killer(): Promise<void> {
  while (performance.now() < killAt) await new Promise((done) => setTimeout(done, 20));
  const collected = join(dataDir, 'collected');
  const names = readdirSync(collected);
  const stagingBusy = existsSync(join(dataDir, 'staging')) && readdirSync(join(dataDir, 'staging')).length > 0;
  kill = {
    atSeconds: (killAt - (deadline - seconds * 1000)) / 1000,
    batchImporting: stagingBusy,
    readyBatches: names.filter((n) => n.endsWith('.ndjson') && !n.startsWith('.')).length,
    openBatches: names.filter((n) => n.startsWith('.open-')).length,
  };
  process.kill(-server.pid!, 'SIGKILL');
  const stopped = performance.now();
  restarting = (async () => {
    await new Promise((done) => server.once('exit', done));
    server = await start();
    down = (performance.now() - stopped) / 1000;
    restarting = undefined;
  })();
  await restarting;
}

const loadStarted = performance.now();
await Promise.all([...Array.from({ length: clients }, client), killer()]);
const loadSeconds = (performance.now() - loadStarted) / 1000;

// Every batch imported: the server's sink closes its open batch within 2 s and imports it.
const rows = await waitForRows(acked.size);
process.kill(-server.pid!, 'SIGTERM');
await new Promise((done) => server.once('exit', done));

const stored = new Map<number, number>();
for (const id of rows) stored.set(id, (stored.get(id) ?? 0) + 1);
const lost = [...acked].filter((id) => !stored.has(id)).length;
const doubled = [...stored.values()].filter((n) => n > 1).length;
const unacked = [...stored.keys()].filter((id) => !acked.has(id)).length;

const upSeconds = loadSeconds - down;
console.log(
  `\n## POST /api/event under load, with a kill -9 (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC)\n`,
);
console.log(
  `${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}; \`npm run bench:collect -- --seconds ${seconds} --clients ${clients}\`\n`,
);
console.log('| figure | value |');
console.log('|---|---|');
console.log(`| requests sent | ${sent} |`);
console.log(
  `| answered 202 | ${acked.size} (${(acked.size / upSeconds).toFixed(0)} a second while the server was up) |`,
);
console.log(`| answered otherwise / no answer (the kill and the restart) | ${refused} / ${failed} |`);
console.log(
  `| the kill | at ${kill!.atSeconds.toFixed(1)} s; a batch import ${kill!.batchImporting ? 'was' : 'was not'} running; ${kill!.openBatches} open and ${kill!.readyBatches} ready batch files |`,
);
console.log(`| down (kill to listening again) | ${down.toFixed(1)} s |`);
console.log(`| rows stored | ${rows.length} |`);
console.log(`| answered 202 and not stored (lost) | ${lost} |`);
console.log(`| stored more than once (doubled) | ${doubled} |`);
console.log(`| stored without an answer (in flight at the kill) | ${unacked} |`);
rmSync(dataDir, { recursive: true, force: true });
if (lost > 0 || doubled > 0) process.exitCode = 1;

/** The ids of the site's stored rows, once at least `expected` are stored (or after 60 s). */
async function waitForRows(expected: number): Promise<number[]> {
  const until = performance.now() + 60_000;
  for (;;) {
    const ids = await storedIds();
    if (ids.length >= expected || performance.now() > until) return ids;
    await new Promise((done) => setTimeout(done, 1000));
  }
}

async function storedIds(): Promise<number[]> {
  const dir = join(dataDir, 'current', 'events', `domain=${SITE}`);
  if (!existsSync(dir)) return [];
  const instance = await DuckDBInstance.create(':memory:');
  try {
    const connection = await instance.connect();
    const reader = await connection.runAndReadAll(
      `SELECT CAST(json_extract_string(event_properties, '$.id') AS INTEGER) AS id FROM read_parquet('${dir}/*/*.parquet')`,
    );
    return reader.getRowObjects().map((r) => Number(r.id));
  } finally {
    instance.closeSync();
  }
}
