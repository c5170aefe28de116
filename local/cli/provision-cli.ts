import { provisionPythonTool, pythonTools, type PythonTool } from '../tools/python-tools.js';
import { findJava, provisionTrino } from '../tools/trino-install.js';

// `npm run provision`: installs what the Trino, cfn-lint and S3 tests need into the cache (outside the repository),
// so a test run never starts with a download. `.ci/run` calls it; tests provision on first use too.

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
console.log(`provisioned in ${Math.round(performance.now() - started)} ms`);
