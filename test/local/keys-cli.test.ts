import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKeysCommand, UsageError } from '../../cli/keys-command.js';
import { runCli } from '../support/run-cli.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// `npm run keys` as a child process against a running local API (it attaches to the API's DynamoDB), and the
// argument rules in-process, where a table of cases costs no process start each.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const keys = (...args: string[]) => runCli('cli/keys-cli.ts', args, { ANALYTICS_DATA_DIR: api.paths.dataDir });

describe('npm run keys (child process)', () => {
  it('create --json prints exactly one JSON object with the token, and the token works', async () => {
    const result = await keys('create', '--domain', 'keys.test', '--json');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]!);
    expect(Object.keys(created)).toEqual(['token', 'key_id', 'type', 'domains', 'scopes', 'owner']);
    expect(created).toMatchObject({
      type: 'project',
      domains: ['keys.test'],
      scopes: ['analytics:read', 'analytics:write'],
    });
    expect(created.token).toMatch(new RegExp(`^aqk_${created.key_id}_`));
    const res = await api.request('GET', '/v1/annotations', { token: created.token, query: { domain: 'keys.test' } });
    expect(res.status).toBe(200);
  });

  it('creates personal tokens with several domains, chosen scopes, owner and event limit', async () => {
    const result = await keys(
      'create',
      '--type',
      'personal',
      '--domain',
      'limit-a.test',
      '--domain',
      'limit-b.test',
      '--scopes',
      'analytics:read',
      '--owner',
      'user-7',
      '--event-limit',
      '1',
      '--json',
    );
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout);
    expect(created).toMatchObject({
      type: 'personal',
      domains: ['limit-a.test', 'limit-b.test'],
      scopes: ['analytics:read'],
      owner: 'user-7',
    });
    const read = (domain: string) => api.request('GET', '/v1/annotations', { token: created.token, query: { domain } });
    expect((await read('limit-a.test')).status).toBe(200);
    const overLimit = await read('limit-a.test'); // the event limit of 1 is used up for this domain's month
    expect([overLimit.status, overLimit.body.error]).toEqual([403, 'usage_limit_exceeded']);
    expect((await read('limit-b.test')).status).toBe(200);
    const write = await api.request('POST', '/v1/annotations', {
      token: created.token,
      body: { domain: 'limit-b.test', date: '2026-03-01', title: 'x' },
    });
    expect(write.status).toBe(403); // read-only scope
  });

  it('without --json shows the token once with a warning, and revoke makes it fail', async () => {
    const result = await keys('create', '--domain', 'keys.test');
    expect(result.code).toBe(0);
    const token = /aqk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}/.exec(result.stdout)?.[0];
    expect(token).toBeDefined();
    expect(result.stdout).toMatch(/shown only once/);
    const keyId = token!.split('_')[1]!;

    const revoked = await keys('revoke', keyId);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain(`Revoked key ${keyId}`);
    const res = await api.request('GET', '/v1/annotations', { token, query: { domain: 'keys.test' } });
    expect(res.status).toBe(401);
  });

  it('exits 1 with a message for an unknown key id, and 2 with the usage for bad arguments', async () => {
    const [unknown, usage] = await Promise.all([
      keys('revoke', '0123456789abcdef'),
      keys('create', '--domain', 'a.test', '--domain', 'b.test'),
    ]);
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toContain('No key with id "0123456789abcdef"');
    expect(usage).toMatchObject({ code: 2, stdout: '' });
    expect(usage.stderr).toContain('error: a project key takes exactly one --domain');
    expect(usage.stderr).toContain('usage:');
  });
});

describe('argument rules', () => {
  it('refuses an owner with control characters or direction overrides, which would forge what the CLI prints', () => {
    for (const owner of ['ops\nCreated project key 0000', 'ops\u001b[2J', 'ops\u202eevil', 'ops\u0007']) {
      expect(
        () => parseKeysCommand(['create', '--domain', 'shop.example.com', '--owner', owner]),
        JSON.stringify(owner),
      ).toThrow(/--owner must not contain control characters/);
    }
    expect(parseKeysCommand(['create', '--domain', 'shop.example.com', '--owner', 'Zoë Ops (team 7)'])).toMatchObject({
      input: { owner: 'Zoë Ops (team 7)' },
    });
  });

  it('defaults to a project key with both scopes', () => {
    expect(parseKeysCommand(['create', '--domain', 'shop.example.com'])).toEqual({
      name: 'create',
      input: { type: 'project', domains: ['shop.example.com'] },
      json: false,
      aws: false,
    });
    expect(parseKeysCommand(['revoke', 'abc', '--json'])).toEqual({
      name: 'revoke',
      keyId: 'abc',
      json: true,
      aws: false,
    });
    expect(parseKeysCommand(['revoke', 'abc', '--aws'])).toMatchObject({ aws: true });
    expect(parseKeysCommand(['--help'])).toBe('help');
  });

  const usageErrors: [string[], RegExp][] = [
    [[], /missing command/],
    [['list'], /unknown command "list"/],
    [['create'], /at least one --domain/],
    [['create', '--domain', 'a.test', '--domain', 'b.test'], /project key takes exactly one --domain/],
    [['create', '--domain', 'Shop.test'], /not a lower-case domain name/],
    [['create', '--domain', 'http://shop.test'], /not a lower-case domain name/],
    [['create', '--domain', 'a.test', '--type', 'team'], /--type must be project or personal/],
    [['create', '--domain', 'a.test', '--scopes', 'analytics:read,analytics:admin'], /unknown scope "analytics:admin"/],
    [['create', '--domain', 'a.test', '--scopes', ''], /unknown scope/],
    [['create', '--domain', 'a.test', '--event-limit', '0'], /--event-limit must be a positive integer/],
    [['create', '--domain', 'a.test', '--event-limit', '-5'], /'--event-limit' argument is ambiguous/],
    [['create', '--domain', 'a.test', '--event-limit=-5'], /--event-limit must be a positive integer/],
    [['create', '--domain', 'a.test', '--event-limit', '1.5'], /--event-limit must be a positive integer/],
    [
      ['create', '--domain', 'a.test', '--event-limit', '99999999999999999999'],
      /--event-limit must be a positive integer/,
    ],
    [['create', '--domain', 'a.test', '--owner', ' '], /--owner must not be empty/],
    [['create', '--domain', 'a.test', '--bogus'], /Unknown option '--bogus'/],
    [['create', '--domain', 'a.test', 'extra'], /unexpected argument "extra"/],
    [['create', '--domain'], /argument missing/],
    [['revoke'], /exactly one KEY_ID/],
    [['revoke', 'a', 'b'], /exactly one KEY_ID/],
    [['revoke', 'abc', '--domain', 'a.test'], /revoke takes only a KEY_ID/],
  ];
  it.each(usageErrors)('rejects %j', (args, message) => {
    expect(() => parseKeysCommand(args)).toThrow(UsageError);
    expect(() => parseKeysCommand(args)).toThrow(message);
  });
});
