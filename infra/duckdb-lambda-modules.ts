import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from './tool-cache.js';

// DuckDB's Node modules as the store-writing functions (ingest, upkeep) need them on Lambda: arm64 Linux, glibc.
// npm installs the binding package for the machine it runs on only, so the arm64 one is fetched here with
// `npm pack` (from the registry npm is configured with), checked against the integrity pinned below, and laid out
// with the project's own @duckdb/node-api, @duckdb/node-bindings and detect-libc (same versions, from
// node_modules) as a `node_modules` folder in the cache. The stack copies it beside each such function's bundle.

export const DUCKDB_LAMBDA_BINDING = {
  name: '@duckdb/node-bindings-linux-arm64',
  version: '1.5.6-r.1',
  integrity: 'sha512-3jnUaDil1BrF/6vAZwVaInJ1xoBaWGHB4PDiUnzJWKCo8a8TLx9j7/gPyPl/UGRBftrYIuTihRZSfF4mWMgtWA==',
} as const;

const projectModules = fileURLToPath(new URL('../node_modules/', import.meta.url));
const companions = ['@duckdb/node-api', '@duckdb/node-bindings', 'detect-libc'];

/** The folder holding `node_modules/` for the Lambda functions that write the store; fetched once, then cached. */
export function duckdbLambdaModules(env: NodeJS.ProcessEnv = process.env): { dir: string; provisioned: boolean } {
  const dir = join(cacheDir(env), `duckdb-lambda-linux-arm64-${DUCKDB_LAMBDA_BINDING.version}`);
  if (existsSync(join(dir, 'complete'))) return { dir, provisioned: false };
  const bindingsVersion = (
    JSON.parse(readFileSync(join(projectModules, '@duckdb/node-bindings/package.json'), 'utf8')) as { version: string }
  ).version;
  if (bindingsVersion !== DUCKDB_LAMBDA_BINDING.version) {
    throw new Error(
      `@duckdb/node-bindings is ${bindingsVersion} but the Lambda binding is pinned at ${DUCKDB_LAMBDA_BINDING.version}: update DUCKDB_LAMBDA_BINDING`,
    );
  }
  mkdirSync(cacheDir(env), { recursive: true });
  const staging = mkdtempSync(join(cacheDir(env), 'duckdb-lambda-'));
  try {
    const packed = JSON.parse(
      execFileSync(
        'npm',
        [
          'pack',
          `${DUCKDB_LAMBDA_BINDING.name}@${DUCKDB_LAMBDA_BINDING.version}`,
          '--pack-destination',
          staging,
          '--json',
          '--silent',
        ],
        { encoding: 'utf8' },
      ),
    ) as { filename: string }[];
    const tarball = join(staging, packed[0]!.filename);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (integrity !== DUCKDB_LAMBDA_BINDING.integrity)
      throw new Error(
        `${DUCKDB_LAMBDA_BINDING.name} tarball integrity ${integrity} is not the pinned ${DUCKDB_LAMBDA_BINDING.integrity}`,
      );
    const modules = join(staging, 'out', 'node_modules');
    mkdirSync(join(modules, '@duckdb'), { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', staging]);
    renameSync(join(staging, 'package'), join(modules, DUCKDB_LAMBDA_BINDING.name));
    for (const name of companions)
      cpSync(join(projectModules, name), join(modules, name), { recursive: true, dereference: true });
    writeFileSync(join(staging, 'out', 'complete'), `${DUCKDB_LAMBDA_BINDING.name}@${DUCKDB_LAMBDA_BINDING.version}\n`);
    rmSync(dir, { recursive: true, force: true });
    renameSync(join(staging, 'out'), dir);
    return { dir, provisioned: true };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
