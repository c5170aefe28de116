import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopEvents } from '../fixtures/shop-events.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The README's "Calling the API" block, run as a user runs it: bash, curl and node in a folder whose `.data` holds
// the demo key, against a running API with demo.example.com's events of the last days. Every curl must get a 2xx
// (curl -f), so a variable the block leaves unset, or a request the API refuses, fails the test.

const DAY = 86_400_000;

function readmeBlock(): string {
  const readme = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Calling the API'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('no sh block under "## Calling the API" in README.md');
  return block;
}

describe("the README's examples of calling the API", () => {
  let api: TestApi;
  const home = mkdtempSync(join(tmpdir(), 'readme-examples-'));
  beforeAll(async () => {
    api = await startTestApi();
    // The fixture's site, moved to demo.example.com and to the last days, so the 30-day examples find it.
    const shift = Date.now() - 3 * DAY - Date.parse('2026-03-01T00:00:00Z');
    const events = shopEvents
      .filter((e) => (e as { domain: string }).domain === 'shop.test')
      .map((e) => {
        const event = e as { timestamp: string };
        return {
          ...event,
          domain: 'demo.example.com',
          timestamp: new Date(Date.parse(event.timestamp) + shift).toISOString(),
        };
      });
    expect((await api.importEvents(events)).rejected).toEqual([]);
    const key = await api.createKey({ domains: ['demo.example.com'] });
    mkdirSync(join(home, '.data'));
    writeFileSync(
      join(home, '.data', 'demo-key.json'),
      JSON.stringify({ domain: 'demo.example.com', token: key.token }),
    );
  }, 120_000);
  afterAll(async () => {
    await api?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('runs as written: every request answers 2xx, the ids taken from earlier answers', async () => {
    const block = readmeBlock();
    expect(block).toContain('BASE=http://127.0.0.1:3000');
    const script = [
      'set -euo pipefail',
      // Fail on any HTTP error, and say which request it was and what the API said.
      'curl() { command curl -sS --fail-with-body "$@" || { s=$?; echo "failed: curl $*" >&2; return $s; }; echo; }',
      block.replace('BASE=http://127.0.0.1:3000', `BASE=${api.url}`),
      'echo "visitor=$VISITOR_ID annotation=$ANNOTATION_ID"',
    ].join('\n');
    const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: home, encoding: 'utf8' });
    const [, visitor, annotation] = /visitor=(\S+) annotation=(\S+)/.exec(stdout) ?? [];
    expect(visitor).toMatch(/^v\d$/);
    expect(annotation).toMatch(/^[0-9a-f-]{36}$/);
  });
});
