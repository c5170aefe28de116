import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

// The Lambda functions exactly as the CDK stack ships them, and what loading one costs. Rather than copying the
// stack's esbuild options (infra/route-function.ts: ESM, node22, minified, AWS SDK bundled, aliases ...), which
// would drift whenever infra/ changes, the bench synthesizes the stack (`cdk synth`, offline, esbuild on this
// machine) into its own folder and measures the assets: size of index.mjs, and the median time to import() it
// in a fresh Node process, with the stack's NODE_OPTIONS=--enable-source-maps and without.

export interface BundleFigures {
  name: string;
  bytes: number;
  gzipBytes: number;
  /** Median ms to import() the bundle in a fresh process, with --enable-source-maps as the stack sets it. */
  initMs: number;
  initMsNoSourceMaps: number;
}

export function measureBundles(projectRoot: string, outDir: string, runs: number): BundleFigures[] {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(join(projectRoot, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '--output', outDir], {
    cwd: projectRoot,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const figures: BundleFigures[] = [];
  for (const asset of readdirSync(outDir)) {
    const file = join(outDir, asset, 'index.mjs');
    if (!existsSync(file)) continue;
    // The handler's own source names the function: functions/<name>.ts in the bundle's source map.
    const sources: string[] = existsSync(`${file}.map`) ? JSON.parse(readFileSync(`${file}.map`, 'utf8')).sources : [];
    const name = sources.map((s) => /(?:^|\/)functions\/([\w-]+)\.ts$/.exec(s)?.[1]).find(Boolean) ?? asset;
    figures.push({
      name,
      bytes: statSync(file).size,
      gzipBytes: gzipSync(readFileSync(file)).length,
      initMs: medianInit(file, runs, true),
      initMsNoSourceMaps: medianInit(file, runs, false),
    });
  }
  return figures.sort((a, b) => a.name.localeCompare(b.name));
}

/** The environment of an analytics function on AWS, with placeholder names (nothing is called at import). */
const lambdaEnv = {
  AWS_REGION: 'eu-west-1',
  CREDENTIALS_TABLE: 'analytics-credentials',
  COUNTERS_TABLE: 'analytics-counters',
  ANNOTATIONS_TABLE: 'analytics-annotations',
  POWERTOOLS_SERVICE_NAME: 'analytics-api',
  LOG_LEVEL: 'INFO',
  ATHENA_WORKGROUP: 'analytics',
  ATHENA_DATABASE: 'analytics',
  ATHENA_TABLE: 'events',
  ATHENA_RESULT_REUSE_MINUTES: '5',
  ATHENA_QUERY_TIMEOUT_MS: '25000',
};

function medianInit(file: string, runs: number, sourceMaps: boolean): number {
  const script = 'const t = performance.now(); await import(process.argv[1]); console.log(performance.now() - t);';
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, file], {
      env: { PATH: process.env.PATH, ...lambdaEnv, ...(sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {}) },
      encoding: 'utf8',
    });
    times.push(Number(out.trim().split('\n').at(-1)));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
