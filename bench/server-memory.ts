import './env.js';
import { DEFAULT_DUCKDB_MEMORY_LIMIT } from '../shared/engines/duckdb-engine.js';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { ensureDataset, rowCount } from './dataset.js';
import { dashboardMix } from './query-mix.js';
import { freePort, listening } from './npm-start.js';

// `npm run bench:memory`: the memory of `npm start` serving a bench data set. Starts the real command on the data
// set's folder (with DUCKDB_MEMORY_LIMIT when given), waits for it to listen (its start-up upkeep included), asks
// the dashboard mix through HTTP for `--rounds` rounds with a key made by `npm run keys`, and samples the resident
// memory of the server's process tree every 250 ms. Prints the peaks (start-up, queries) and each query's p50.
//   npm run bench:memory -- [--rows 100M] [--rounds 3] [--memory-limit 4GB]

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    rounds: { type: 'string', default: '3' },
    'memory-limit': { type: 'string' },
  },
});
const rows = rowCount(flags.rows!);
const projectRoot = resolve(import.meta.dirname, '..');
const log = (message: string) => console.error(message);
const exec = promisify(execFile);

const dataset = await ensureDataset(
  { seed: 42, rows, endDate: '2026-11-20', days: 90, domain: 'shop.bench.example' },
  resolve(projectRoot, '.bench', 'data'),
  log,
);
const port = await freePort();
const env = {
  ...process.env,
  ANALYTICS_DATA_DIR: dataset.paths.dataDir,
  PORT: String(port),
  ANALYTICS_DEMO: '0',
  ...(flags['memory-limit'] ? { DUCKDB_MEMORY_LIMIT: flags['memory-limit'] } : {}),
};

// Its own process group: npm does not pass a signal on to the server, so the group is stopped as a whole.
const server = spawn('npm', ['start'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
const peaks = { start: 0, queries: 0 };
let phase: keyof typeof peaks = 'start';
const sampler = setInterval(() => {
  void treeRssKiB(server.pid!).then((kib) => {
    peaks[phase] = Math.max(peaks[phase], kib);
  });
}, 250);
try {
  const started = performance.now();
  await listening(server, port);
  const startSeconds = (performance.now() - started) / 1000;
  log(`npm start listening after ${startSeconds.toFixed(1)} s`);
  phase = 'queries';
  const created = await exec('npx', ['tsx', 'cli/keys-cli.ts', 'create', '--domain', dataset.spec.domain, '--json'], {
    cwd: projectRoot,
    env,
  });
  const { token } = JSON.parse(created.stdout) as { token: string };
  const mix = dashboardMix(dataset.spec.domain, dataset.spec.endDate);
  const times = new Map<string, number[]>(mix.map((q) => [q.id, []]));
  for (let round = 0; round < Number(flags.rounds); round++) {
    for (const query of mix) {
      const begun = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}${query.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(query.body),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${query.id} answered ${res.status}`);
      times.get(query.id)!.push(performance.now() - begun);
    }
    log(`round ${round + 1}: peak ${(peaks.queries / 1024).toFixed(0)} MiB so far`);
  }
  await new Promise((done) => setTimeout(done, 500));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  console.log(`| data set | ${dataset.rows.toLocaleString('en-US')} events (${dataset.id}) |`);
  console.log(
    `| DUCKDB_MEMORY_LIMIT | ${flags['memory-limit'] ?? `unset (the default, ${DEFAULT_DUCKDB_MEMORY_LIMIT})`} |`,
  );
  console.log(`| start-up | ${startSeconds.toFixed(1)} s, peak RSS ${(peaks.start / 1024).toFixed(0)} MiB |`);
  console.log(`| ${flags.rounds} rounds of the mix | peak RSS ${(peaks.queries / 1024).toFixed(0)} MiB |`);
  console.log(
    `| machine | ${cpus().length} cores, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} |`,
  );
  for (const [id, ms] of times) console.log(`| ${id} | p50 ${median(ms).toFixed(0)} ms |`);
} finally {
  clearInterval(sampler);
  const exited = once(server, 'exit');
  process.kill(-server.pid!, 'SIGINT');
  await exited;
}

/** Resident memory of a process and all its descendants, in KiB. */
async function treeRssKiB(root: number): Promise<number> {
  const { stdout } = await exec('ps', ['-e', '-o', 'pid=,ppid=,rss=']);
  const procs = stdout
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number, number]);
  const tree = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, ppid] of procs) if (tree.has(ppid) && !tree.has(pid)) grew = tree.add(pid).size > 0;
  }
  return procs.filter(([pid]) => tree.has(pid)).reduce((sum, [, , rss]) => sum + rss, 0);
}
