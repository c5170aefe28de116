import { provisionPythonTool, pythonTools, type PythonTool } from '../local/tools/python-tools.js';
import { duckdbLambdaModules } from '../infra/duckdb-lambda-modules.js';
import { lambdaRuntime } from '../local/tools/lambda-runtime-install.js';
import { findJava, provisionTrino } from '../local/tools/trino-install.js';

// `npm run provision`: installs what the Trino, cfn-lint, S3 and Lambda runtime tests and the store writers' Lambda bundles need into
// the cache (outside the repository), so neither a test run nor `cdk synth` starts with a download. `.ci/run` calls it; tests provision on first use too.

const started = performance.now();
const java = findJava();
if ('missing' in java) {
  console.error(`npm run provision: ${java.missing}`);
  process.exit(1);
}
const trino = await provisionTrino();
console.log(`Trino: ${trino.provisioned} at ${trino.home} (Java ${java.version}: ${java.java})`);
for (const tool of Object.keys(pythonTools) as PythonTool[]) {
  const installed = provisionPythonTool(tool);
  console.log(`${tool}: ${installed.provisioned ? 'installed' : 'cached'} at ${installed.bin}`);
}
const duckdb = duckdbLambdaModules();
console.log(`DuckDB for Lambda (linux-arm64): ${duckdb.provisioned ? 'fetched' : 'cached'} at ${duckdb.dir}`);
const runtime = lambdaRuntime();
console.log(
  `Lambda runtime (Node.js 22, aws-lambda-ric, aws-lambda-rie): ${runtime.provisioned ? 'built' : 'cached'} at ${runtime.rie}`,
);
console.log(`provisioned in ${Math.round(performance.now() - started)} ms`);
