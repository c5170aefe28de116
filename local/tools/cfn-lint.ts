import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from './trino-install.js';

// cfn-lint, the CloudFormation linter `sam validate --lint` runs, pinned and installed from PyPI into a virtual
// environment in the cache (never into the repository or the system Python).

export const CFN_LINT_VERSION = '1.58.0';

/** The cfn-lint executable, installed first when the cache lacks it. Needs `python3` with the venv module. */
export function provisionCfnLint(env: NodeJS.ProcessEnv = process.env): { bin: string; provisioned: boolean } {
  const venv = join(cacheDir(env), `cfn-lint-${CFN_LINT_VERSION}`);
  const bin = join(venv, 'bin', 'cfn-lint');
  const complete = join(venv, '.complete');
  if (existsSync(complete)) return { bin, provisioned: false };
  // A virtual environment records its own path, so it is built in place; the marker says it was finished.
  rmSync(venv, { recursive: true, force: true });
  execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  execFileSync(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `cfn-lint==${CFN_LINT_VERSION}`], { stdio: 'inherit' });
  writeFileSync(complete, `${CFN_LINT_VERSION}\n`);
  return { bin, provisioned: true };
}
