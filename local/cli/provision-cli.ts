import { provisionCfnLint } from '../tools/cfn-lint.js';
import { findJava, provisionTrino } from '../tools/trino-install.js';

// `npm run provision`: installs what the Trino and cfn-lint tests need into the cache (outside the repository),
// so a test run never starts with a download. `.ci/run` calls it; tests provision on first use too.

const started = performance.now();
const java = findJava();
if ('missing' in java) {
  console.error(`npm run provision: ${java.missing}`);
  process.exit(1);
}
const trino = await provisionTrino();
console.log(`Trino: ${trino.provisioned} at ${trino.home} (Java ${java.version}: ${java.java})`);
const cfnLint = provisionCfnLint();
console.log(`cfn-lint: ${cfnLint.provisioned ? 'installed' : 'cached'} at ${cfnLint.bin}`);
console.log(`provisioned in ${Math.round(performance.now() - started)} ms`);
