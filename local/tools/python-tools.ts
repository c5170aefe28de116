import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../../infra/tool-cache.js';

// Tools from PyPI, pinned, each installed into its own virtual environment in the cache (never into the
// repository or the system Python): cfn-lint, the CloudFormation linter `sam validate --lint` runs; moto, whose
// server mode is a real S3 implementation for the tests; schemathesis, which tests the server against its OpenAPI
// document; openapi-python-client, which generates the Python client the client tests use.

interface ToolSpec {
  requirement: string;
  bin: string;
  /** Further packages installed beside it. */
  with?: readonly string[];
}

export const pythonTools = {
  'cfn-lint': { requirement: 'cfn-lint==1.58.0', bin: 'cfn-lint' },
  moto: { requirement: 'moto[server]==5.2.5', bin: 'moto_server' },
  schemathesis: { requirement: 'schemathesis==4.32.5', bin: 'schemathesis' },
  // With what the clients it generates import (python-dateutil for dates), so the tests can run one.
  'openapi-python-client': {
    requirement: 'openapi-python-client==0.29.1',
    bin: 'openapi-python-client',
    with: ['python-dateutil==2.9.0.post0'],
  },
} as const satisfies Record<string, ToolSpec>;

export type PythonTool = keyof typeof pythonTools;

/** The tool's executable, installed first when the cache lacks it. Needs `python3` with the venv module. */
export function provisionPythonTool(
  tool: PythonTool,
  env: NodeJS.ProcessEnv = process.env,
): { bin: string; provisioned: boolean } {
  const { requirement, bin } = pythonTools[tool];
  const extra = (pythonTools[tool] as ToolSpec).with ?? [];
  const venv = join(cacheDir(env), requirement.replace(/\[.*\]/, '').replace('==', '-'));
  const executable = join(venv, 'bin', bin);
  const complete = join(venv, '.complete');
  // The marker lists what was installed: a tool whose packages beside it changed is installed again.
  const installed = `${[requirement, ...extra].join('\n')}\n`;
  if (existsSync(complete) && readFileSync(complete, 'utf8') === installed)
    return { bin: executable, provisioned: false };
  // A virtual environment records its own path, so it is built in place; the marker says it was finished.
  rmSync(venv, { recursive: true, force: true });
  execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  execFileSync(join(venv, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', requirement, ...extra], {
    stdio: 'inherit',
  });
  writeFileSync(complete, installed);
  return { bin: executable, provisioned: true };
}
