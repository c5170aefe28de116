import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AnalyticsApiStack } from '../../infra/analytics-api-stack.js';
import { defaultSettings } from '../../infra/settings.js';
import { STACK_NAME } from '../../infra/stack-name.js';
import { provisionPythonTool } from '../../local/tools/python-tools.js';

// The synthesized template passes cfn-lint, the linter `sam validate --lint` runs, with every rule on but these,
// each for its reason:
const suppressed: Record<string, string> = {
  // Every NodejsFunction depends on its role and the role's default policy, so the policy is in place before the
  // function can run; the role half repeats the function's GetAtt on the role. CDK writes it; it costs nothing.
  W3005: 'DependsOn on a resource the function already references with GetAtt',
};

const dir = mkdtempSync(join(tmpdir(), 'cfn-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('the stack template passes cfn-lint', { timeout: 300_000 }, () => {
  const cdkContext = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
  // Bundling the handlers changes only the code assets' hashes, not a line cfn-lint reads.
  const app = new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(new AnalyticsApiStack(app, STACK_NAME, { settings: defaultSettings })).toJSON();
  const file = join(dir, 'template.json');
  writeFileSync(file, JSON.stringify(template, null, 2));

  const { bin } = provisionPythonTool('cfn-lint');
  const run = spawnSync(bin, ['--format', 'json', '--ignore-checks', ...Object.keys(suppressed), '--', file], {
    encoding: 'utf8',
  });
  expect(run.error).toBeUndefined();
  const findings = JSON.parse(run.stdout || '[]') as {
    Rule: { Id: string };
    Message: string;
    Location: { Path: string[] };
  }[];
  expect(findings.map((f) => `${f.Rule.Id} ${f.Location.Path.join('/')}: ${f.Message}`)).toEqual([]);
  expect(run.status, run.stderr).toBe(0);
});
