import { execFile } from 'node:child_process';
import { createHash, createHmac } from 'node:crypto';
import { statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AthenaClient, StartQueryExecutionCommand } from '@aws-sdk/client-athena';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../../local/tools/chromium.js';
import { chromiumPath } from '../support/browser-available.js';
import { startTestApi, type TestApi } from '../support/test-api.js';
import { trinoAvailable } from '../support/trino-available.js';

// The local services around the API, as another local user and a web page in the user's browser see them
// (docs/SECURITY.md, "Local services"): the data folder's DynamoDB answers only requests signed with the folder's
// own credentials, sends no CORS headers, and its files are the owner's only.

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 120_000);
afterAll(async () => {
  await api?.close();
});

const listTables = (
  credentials: { accessKeyId: string; secretAccessKey: string },
  extra: Record<string, unknown> = {},
) =>
  new DynamoDBClient({
    endpoint: api.dynamo.endpoint,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
    ...extra,
  }).send(new ListTablesCommand({}));
const unsigned = (init: RequestInit = {}) =>
  fetch(api.dynamo.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'DynamoDB_20120810.ListTables',
      origin: 'http://evil.test',
    },
    body: '{}',
    ...init,
  });

describe('the local DynamoDB', () => {
  it("answers requests signed with the data folder's credentials", async () => {
    expect((await listTables(api.dynamo.credentials)).TableNames?.length).toBeGreaterThan(0);
  });

  it('refuses unsigned requests, other credentials, a wrong secret, an old signature, and sends no CORS headers', async () => {
    const bare = await unsigned();
    expect(bare.status).toBe(403);
    expect(await bare.json()).toMatchObject({ __type: expect.stringContaining('MissingAuthenticationToken') });
    expect(bare.headers.get('access-control-allow-origin')).toBeNull();
    await expect(listTables({ accessKeyId: 'local', secretAccessKey: 'local' })).rejects.toMatchObject({
      name: 'UnrecognizedClientException',
    });
    await expect(listTables({ ...api.dynamo.credentials, secretAccessKey: 'guessed' })).rejects.toMatchObject({
      name: 'InvalidSignatureException',
    });
    // Signed 20 minutes ago: DynamoDB allows 15.
    await expect(listTables(api.dynamo.credentials, { systemClockOffset: -20 * 60_000 })).rejects.toMatchObject({
      name: 'InvalidSignatureException',
    });
    const preflight = await unsigned({
      method: 'OPTIONS',
      headers: { origin: 'http://evil.test', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a signed request whose body was changed on the way', async () => {
    const url = new URL(api.dynamo.endpoint);
    const signer = new SignatureV4({
      credentials: api.dynamo.credentials,
      region: 'us-east-1',
      service: 'dynamodb',
      sha256: Sha256,
    });
    const signed = await signer.sign({
      method: 'POST',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: '/',
      query: {},
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.ListTables',
      },
      body: '{}',
    });
    const send = (body: string) => fetch(api.dynamo.endpoint, { method: 'POST', headers: signed.headers, body });
    expect((await send('{}')).status).toBe(200);
    const changed = await send('{"Limit":1}');
    expect(changed.status).toBe(403);
    expect(await changed.json()).toMatchObject({ __type: expect.stringContaining('InvalidSignature') });
  });

  it('keeps the data folder and its credentials and endpoint files to their owner', () => {
    expect(statSync(api.dataDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(api.dataDir, 'dynamodb-credentials.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(api.dataDir, 'dynamodb-endpoint.json')).mode & 0o777).toBe(0o600);
  });

  // Root can act as another user (the CI machines run as root); elsewhere the file modes above are what holds.
  it.runIf(process.getuid?.() === 0)(
    'refuses another local user: no file to read, and the port refuses what it sends',
    async () => {
      // Asynchronously: the door runs in this process and must answer meanwhile.
      const asNobody = async (script: string) =>
        (
          await promisify(execFile)('runuser', ['-u', 'nobody', '--', process.execPath, '-e', script], {
            encoding: 'utf8',
            cwd: '/',
          })
        ).stdout.trim();
      expect(
        await asNobody(
          `try { require('fs').readFileSync(${JSON.stringify(join(api.dataDir, 'dynamodb-credentials.json'))}); console.log('read') } catch (e) { console.log(e.code) }`,
        ),
      ).toBe('EACCES');
      const status = await asNobody(
        `fetch(${JSON.stringify(api.dynamo.endpoint)}, { method: 'POST', headers: { 'content-type': ` +
          `'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.Scan' }, body: JSON.stringify({ ` +
          `TableName: 'credentials' }) }).then((r) => console.log(r.status))`,
      );
      expect(status).toBe('403');
    },
  );
});

/** SHA-256, and HMAC-SHA-256 with a secret, as the signer asks for them. */
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', typeof secret === 'string' ? secret : Buffer.from(secret as ArrayBuffer));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(typeof data === 'string' ? data : Buffer.from(data as ArrayBuffer));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {}
}

describe.skipIf(!trinoAvailable('Local Trino services suite'))(
  'the local Athena emulator (npm start in Trino mode)',
  () => {
    let trinoApi: TestApi;
    beforeAll(async () => {
      // The server `npm start` runs, not the tests' shared one: what is locked is what users run.
      trinoApi = await startTestApi({ engine: 'trino', ownTrino: true });
    }, 300_000);
    afterAll(async () => {
      await trinoApi?.close();
    });

    it("the Athena emulator refuses unsigned requests and other credentials; the API, signing with the folder's, answers", async () => {
      const bare = await fetch(trinoApi.trino!.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AmazonAthena.StartQueryExecution' },
        body: JSON.stringify({ QueryString: 'SELECT 1' }),
      });
      expect(bare.status).toBe(403);
      expect(bare.headers.get('access-control-allow-origin')).toBeNull();
      const other = new AthenaClient({
        endpoint: trinoApi.trino!.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
        maxAttempts: 1,
      });
      await expect(other.send(new StartQueryExecutionCommand({ QueryString: 'SELECT 1' }))).rejects.toMatchObject({
        name: 'UnrecognizedClientException',
      });
      const token = (await trinoApi.createKey({ domains: ['locked.test'] })).token;
      const answer = await trinoApi.request('POST', '/v1/query', {
        token,
        body: { domain: 'locked.test', metrics: ['visitors'], date_range: ['2026-01-01', '2026-01-31'] },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    });

    it("Trino's port takes no statement without this run's token, and no plain HTTP; another user cannot read the key", async () => {
      const trino = trinoApi.trino!.trino;
      const statement = (headers: Record<string, string>) =>
        new Promise<number>((resolve, reject) => {
          const req = httpsRequest(
            `${trino.server}/v1/statement`,
            { method: 'POST', ca: trino.ssl.ca, headers: { 'x-trino-user': trino.user, ...headers } },
            (res) => {
              res.resume();
              resolve(res.statusCode!);
            },
          );
          req.on('error', reject);
          req.end('SELECT 1');
        });
      // Its own token first: the door is open to this process.
      expect(await statement(trino.extraHeaders)).toBe(200);
      expect(await statement({})).toBe(401);
      const forged = (key: string) => {
        const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: trino.user })}`;
        return `Bearer ${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
      };
      expect(await statement({ authorization: forged('guessed') })).toBe(401);
      // Plain HTTP on the same port is not served: the TLS server drops it.
      const plain = await fetch(trino.server.replace('https:', 'http:') + '/v1/statement', {
        method: 'POST',
        headers: { 'x-trino-user': trino.user },
        body: 'SELECT 1',
      }).then(
        (r) => r.status,
        () => 'refused',
      );
      expect(plain === 'refused' || plain === 400).toBe(true);
      if (process.getuid?.() === 0) {
        const asNobody = async (script: string) =>
          (
            await promisify(execFile)('runuser', ['-u', 'nobody', '--', process.execPath, '-e', script], {
              encoding: 'utf8',
              cwd: '/',
              env: { PATH: process.env.PATH, NODE_TLS_REJECT_UNAUTHORIZED: '0' },
            })
          ).stdout.trim();
        const status = await asNobody(
          `fetch(${JSON.stringify(`${trino.server}/v1/statement`)}, { method: 'POST', headers: { ` +
            `'x-trino-user': 'local' }, body: 'SELECT 1' }).then((r) => console.log(r.status), (e) => ` +
            `console.log('refused'))`,
        );
        expect(status).toBe('401');
      }
    });

    it.runIf(Boolean(chromiumPath('Local services browser suite')))(
      "a page on another origin cannot run a statement on Trino's port",
      async () => {
        const browser = await launchChromium(chromiumPath('Local services browser suite')!);
        try {
          const tab = await browser.newPage();
          await tab.goto('data:text/html,<title>elsewhere</title>');
          const outcome = await tab.evaluate(async (endpoint) => {
            const tried: string[] = [];
            for (const url of [endpoint, endpoint.replace('https:', 'http:')])
              await fetch(`${url}/v1/statement`, {
                method: 'POST',
                headers: { 'content-type': 'text/plain', 'x-trino-user': 'local' },
                body: 'SELECT 1',
              })
                .then((r) => tried.push(`read ${r.status}`))
                .catch(() => tried.push('blocked'));
            return tried;
          }, trinoApi.trino!.trino.server);
          expect(outcome).toEqual(['blocked', 'blocked']);
        } finally {
          await browser.close();
        }
      },
    );
  },
);

const browserPath = chromiumPath('Local services browser suite');

describe.skipIf(!browserPath)("a web page on another origin, in the user's browser", () => {
  let browser: Browser;
  let page: Server;
  let pageUrl: string;

  beforeAll(async () => {
    browser = await launchChromium(browserPath!);
    page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  it('can neither read the local DynamoDB nor write to it', async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    const outcome = await tab.evaluate(async (endpoint) => {
      const tried: string[] = [];
      // As DynamoDB's protocol asks: a preflighted request, refused before it is sent.
      await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' },
        body: '{}',
      })
        .then((r) => tried.push(`read ${r.status}`))
        .catch(() => tried.push('blocked'));
      // A simple request needs no preflight; the door refuses it unsigned, and the page cannot read the answer.
      await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: '{"TableName":"credentials"}',
      })
        .then((r) => tried.push(`read ${r.status}`))
        .catch(() => tried.push('blocked'));
      return tried;
    }, api.dynamo.endpoint);
    expect(outcome).toEqual(['blocked', 'blocked']);
    await tab.close();
  });
});
