import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { HIVE_PARTITIONS, pathLiteral } from '../shared/engines/duckdb-engine.js';
import type { Dataset } from './dataset.js';

// Plumbing both peers share: installing their Debian package, free loopback ports, running their command-line
// tools, and exporting the data set's rows (read from the same Parquet files) as CSV for their loaders.

/** True when `command` is on PATH. */
export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Installs Debian packages unless `command` already exists; as root only (apt-get needs it). Returns why it
 * could not, or null when the command is there.
 */
export function ensureInstalled(command: string, packages: string[], log: (line: string) => void): string | null {
  if (hasCommand(command)) return null;
  if (process.getuid?.() !== 0) return `${command} is missing and installing ${packages.join(', ')} needs root`;
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      encoding: 'utf8',
    });
  log(`installing ${packages.join(', ')} (apt-get) ...`);
  let result = install();
  if (result.status !== 0) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    result = install();
  }
  if (result.status !== 0 || !hasCommand(command))
    return `apt-get install ${packages.join(' ')} failed: ${(result.stderr ?? '').trim().split('\n').at(-1)}`;
  return null;
}

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export { freePort } from '../local/tools/local-process.js';

/** Runs a command to completion; rejects with its stderr on a non-zero exit. `input` is streamed to stdin. */
export function run(
  command: string,
  args: string[],
  options: SpawnOptions & { input?: string; inputFile?: string } = {},
): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0
        ? resolveRun(out)
        : reject(new Error(`${command} ${args.slice(0, 3).join(' ')} exited ${code}: ${err.trim().slice(0, 800)}`)),
    );
    // A command that exits early closes its stdin; its exit code, not the broken pipe, reports the failure.
    child.stdin!.on('error', () => undefined);
    if (options.inputFile) createReadStream(options.inputFile).pipe(child.stdin!);
    else child.stdin!.end(options.input ?? '');
  });
}

/** Waits until `ready()` holds, polling; throws after `timeoutMs`. */
export async function waitFor(ready: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await ready().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000} s`);
}

/**
 * Writes the data set's rows as CSV (header-less) with the given select list over the events view, sorted as
 * asked. DuckDB reads the very Parquet files the API reads, so every engine holds the same rows.
 */
export async function exportCsv(dataset: Dataset, selectList: string, orderBy: string, file: string): Promise<void> {
  mkdirSync(dirname(file), { recursive: true });
  const instance = await DuckDBInstance.create(':memory:', { threads: '2' });
  try {
    const connection = await instance.connect();
    const glob = pathLiteral(join(dataset.paths.eventsDir, '*', '*', '*.parquet'));
    await connection.run(
      `COPY (SELECT ${selectList} FROM read_parquet(${glob}, ${HIVE_PARTITIONS}) ORDER BY ${orderBy}) ` +
        `TO ${pathLiteral(file)} (FORMAT csv, HEADER false)`,
    );
    connection.closeSync();
  } finally {
    instance.closeSync();
  }
  if (!existsSync(file)) throw new Error(`export to ${file} wrote nothing`);
}

/** A SQL string literal for values the bench itself chose (domains, dates, zones), never outside input. */
export function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** `YYYY-MM-DD HH:MM:SS` of a UTC instant. */
export function utcText(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
