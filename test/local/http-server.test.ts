import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectErrorResponse } from '../support/http-assertions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// The local stand-in for API Gateway (local/server/http-server.ts): routing, 404/405/413, and the v2 event it hands
// to the very handler module Lambda runs. The list and delete handlers are wrapped to record their events.

const seen = vi.hoisted(() => [] as APIGatewayProxyEventV2[]);

vi.mock('../../functions/annotations-list.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../functions/annotations-list.js')>();
  return {
    ...original,
    handler: (event: APIGatewayProxyEventV2, context: never) => (
      seen.push(structuredClone(event)),
      original.handler(event, context)
    ),
  };
});
vi.mock('../../functions/annotations-delete.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../functions/annotations-delete.js')>();
  return {
    ...original,
    handler: (event: APIGatewayProxyEventV2, context: never) => (
      seen.push(structuredClone(event)),
      original.handler(event, context)
    ),
  };
});

// A handler module that fails to load the first time it is imported, then loads.
const loads = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../functions/event-properties.ts', () => {
  loads.count += 1;
  if (loads.count === 1) throw new Error('SyntaxError in /work/main/functions/event-properties.ts:3:7');
  return {
    handler: async () => ({
      statusCode: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"loaded":true}',
    }),
  };
});

const DOMAIN = 'example.com';
const MiB = 1024 * 1024;

let api: TestApi;
let token: string;

beforeAll(async () => {
  api = await startTestApi();
  token = (await api.createKey({ domains: [DOMAIN] })).token;
});

afterAll(async () => {
  await api?.close();
});

beforeEach(() => {
  seen.length = 0;
});

describe('routing', () => {
  it.each(['/nothing', '/v1', '/v1/nothing', '/v2/annotations', '/v1/annotations/a/b', '/v1/annotations/'])(
    'answers 404 JSON for the unknown path %s',
    async (path) => {
      const res = await api.request('GET', path, { token });
      expectErrorResponse(res, 404, 'not_found');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    },
  );

  it('serves the dashboard at / with its script and style, built in memory', async () => {
    const page = await fetch(`${api.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('src="dashboard/app.js"');
    const script = await fetch(`${api.url}/dashboard/app.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect((await script.text()).length).toBeGreaterThan(10_000);
    expect((await fetch(`${api.url}/dashboard/app.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    // No server route hands out a key: the demo key travels only in the link `npm start` prints.
    expect((await fetch(`${api.url}/dashboard/config.json`)).status).toBe(404);
  });

  it.each([
    ['PUT', '/v1/annotations', 'GET, POST'],
    ['PATCH', '/v1/annotations', 'GET, POST'],
    ['DELETE', '/v1/annotations', 'GET, POST'],
    ['GET', '/v1/query', 'POST'],
    ['GET', '/v1/annotations/some-id', 'DELETE'],
    ['POST', '/v1/events', 'GET'],
  ])('answers 405 JSON with an Allow header to %s %s', async (method, path, allow) => {
    const res = await api.request(method, path, { token });
    expectErrorResponse(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toBe(allow);
  });

  it('answers 405 before authentication', async () => {
    expectErrorResponse(await api.request('PUT', '/v1/annotations'), 405, 'method_not_allowed');
  });
});

describe('what a browser on another site can do with this server', () => {
  /** A raw request with its own Host header (fetch will not send one). */
  const withHost = (host: string, path = '/') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(api.url);
      const req = httpRequest({ host: url.hostname, port: url.port, path, headers: { host } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.once('error', reject);
      req.end();
    });

  it('answers 421 to a request addressed to another host (DNS rebinding), and serves its own names', async () => {
    const port = new URL(api.url).port;
    const rebound = await withHost(`evil.example:${port}`, '/docs');
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body)).toMatchObject({
      error: 'misdirected_request',
      message: expect.stringContaining(`127.0.0.1:${port}`),
    });
    expect((await withHost(`localhost:${port}`, '/docs')).status).toBe(200);
    expect((await withHost(`LOCALHOST:${port}`, '/docs')).status).toBe(200);
    expect((await withHost(`127.0.0.1:${port}`, '/docs')).status).toBe(200);
  });

  it('sends no-sniff, no-frame and no-referrer headers, and a content policy on every page and answer', async () => {
    for (const path of ['/', '/docs', '/docs/swagger-ui.css', '/v1/annotations?domain=x.test', '/nothing']) {
      const res = await fetch(`${api.url}${path}`);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('x-frame-options'), path).toBe('DENY');
      expect(res.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(res.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
    }
    expect((await fetch(`${api.url}/`)).headers.get('content-security-policy')).toContain("script-src 'self';");
    expect((await fetch(`${api.url}/docs`)).headers.get('content-security-policy')).toMatch(
      /script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'/,
    );
    expect((await fetch(`${api.url}/nothing`)).headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});

describe('request targets and methods', () => {
  /** A raw request (fetch normalises targets and refuses some methods). */
  const raw = (method: string, path: string, headers: Record<string, string | number> = {}, body?: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const url = new URL(api.url);
      const req = httpRequest(
        { host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${token}`, ...headers } },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        },
      );
      req.once('error', reject);
      req.end(body);
    });

  it("routes //host/path as that path, not as another host's /path", async () => {
    const res = await raw('GET', `//evil.example/v1/annotations?domain=${DOMAIN}`);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body)).toMatchObject({ error: 'not_found' });
  });

  it('answers HEAD of a page as its GET without a body; HEAD of an API route is 405', async () => {
    const page = await raw('HEAD', '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toBe('');
    expect((await raw('HEAD', '/docs')).status).toBe(200);
    expect((await raw('HEAD', `/v1/annotations?domain=${DOMAIN}`)).status).toBe(405);
  });

  it('refuses __proto__ in the query as any other unknown field: 400 naming it', async () => {
    const res = await raw('GET', `/v1/annotations?domain=${DOMAIN}&__proto__=1`);
    expect(res.status).toBe(400);
    expect(res.body).toContain('__proto__');
  });

  it('answers 413 to a declared length over 1 MiB before reading the body', async () => {
    const url = new URL(api.url);
    const status = await new Promise<number>((resolve, reject) => {
      // Declares 2 MiB and sends none of it: the answer cannot wait for the body.
      const req = httpRequest(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/v1/annotations',
          headers: { 'content-type': 'application/json', 'content-length': 2 * 1024 * 1024 },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.once('error', reject);
      req.flushHeaders();
    });
    expect(status).toBe(413);
  });
});

describe('request body size', () => {
  it('answers 413 JSON to a body over 1 MiB, before authentication', async () => {
    const res = await api.request('POST', '/v1/annotations', { rawBody: 'x'.repeat(MiB + 1) });
    expectErrorResponse(res, 413, 'payload_too_large');
  });

  it('passes a body of exactly 1 MiB on to the handler', async () => {
    const body = JSON.stringify({ domain: DOMAIN, date: '2026-01-01', title: '' });
    const padded = body.slice(0, -1) + ' '.repeat(MiB - Buffer.byteLength(body)) + '}';
    expect(Buffer.byteLength(padded)).toBe(MiB);
    const res = await api.request('POST', '/v1/annotations', { token, rawBody: padded });
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(['title']);
  });

  it('counts bytes, not characters', async () => {
    const res = await api.request('POST', '/v1/annotations', { token, rawBody: 'é'.repeat(MiB / 2 + 1) });
    expectErrorResponse(res, 413, 'payload_too_large');
  });
});

describe('the API Gateway v2 event handed to handlers', () => {
  it('has the HTTP API payload 2.0 shape', async () => {
    const res = await fetch(`${api.url}/v1/annotations?domain=${DOMAIN}&start_date=2026-01-01&tag=a&tag=b`, {
      headers: {
        authorization: `Bearer ${token}`,
        'X-Custom-Header': 'Mixed',
        'user-agent': 'vitest-agent',
        cookie: 'a=1; b=2',
      },
    });
    expect(res.status).toBe(400); // `tag` is not a known parameter; the event is what this test is about.
    expect(seen).toHaveLength(1);
    const event = seen[0]!;

    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'GET /v1/annotations',
      rawPath: '/v1/annotations',
      rawQueryString: `domain=${DOMAIN}&start_date=2026-01-01&tag=a&tag=b`,
      queryStringParameters: { domain: DOMAIN, start_date: '2026-01-01', tag: 'a,b' },
      isBase64Encoded: false,
      cookies: ['a=1', 'b=2'],
    });
    expect(event.headers['x-custom-header']).toBe('Mixed');
    expect(event.headers.authorization).toBe(`Bearer ${token}`);
    expect(event.headers.cookie).toBeUndefined();
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.pathParameters).toBeUndefined();
    expect(event.body).toBeUndefined();

    const context = event.requestContext;
    expect(context).toMatchObject({
      routeKey: 'GET /v1/annotations',
      stage: '$default',
      http: { method: 'GET', path: '/v1/annotations', protocol: 'HTTP/1.1', userAgent: 'vitest-agent' },
    });
    expect(context.requestId).toBe(res.headers.get('x-request-id'));
    expect(context.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs(context.timeEpoch - Date.now())).toBeLessThan(10_000);
    expect(context.http.sourceIp).toMatch(/127\.0\.0\.1/);
  });

  it('omits queryStringParameters when there is no query and keeps rawQueryString empty', async () => {
    await api.request('GET', '/v1/annotations', { token });
    expect(seen[0]).toMatchObject({ rawQueryString: '' });
    expect(seen[0]!.queryStringParameters).toBeUndefined();
  });

  it('decodes percent-encoded query values', async () => {
    await api.request('GET', '/v1/annotations', { token, query: { domain: DOMAIN, start_date: '2026-01-01 x/y' } });
    expect(seen[0]!.queryStringParameters?.start_date).toBe('2026-01-01 x/y');
  });
});

describe('path parameters', () => {
  async function createAnnotation(): Promise<string> {
    const res = await api.request('POST', '/v1/annotations', {
      token,
      body: { domain: DOMAIN, date: '2026-05-01', title: 'path test' },
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  const percentEncodeEveryChar = (s: string) =>
    [...Buffer.from(s)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

  it('decodes a percent-encoded id once and finds the annotation', async () => {
    const id = await createAnnotation();
    const res = await api.request('DELETE', `/v1/annotations/${percentEncodeEveryChar(id)}`, {
      token,
      query: { domain: DOMAIN },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(seen.at(-1)!.pathParameters).toEqual({ id });
    expect(seen.at(-1)!.routeKey).toBe('DELETE /v1/annotations/{id}');
  });

  it('does not decode twice: a double-encoded id is a different id', async () => {
    const id = await createAnnotation();
    const doubleEncoded = percentEncodeEveryChar(percentEncodeEveryChar(id));
    const res = await api.request('DELETE', `/v1/annotations/${doubleEncoded}`, { token, query: { domain: DOMAIN } });
    expectErrorResponse(res, 404, 'not_found');
    expect(seen.at(-1)!.pathParameters).toEqual({ id: percentEncodeEveryChar(id) });
  });

  it('passes an encoded slash through as part of the id', async () => {
    const res = await api.request('DELETE', '/v1/annotations/a%2Fb', { token, query: { domain: DOMAIN } });
    expectErrorResponse(res, 404, 'not_found');
    expect(seen.at(-1)!.pathParameters).toEqual({ id: 'a/b' });
  });

  it('answers 404 to malformed percent-encoding without calling the handler', async () => {
    const res = await api.request('DELETE', '/v1/annotations/%E0%A4%A', { token, query: { domain: DOMAIN } });
    expectErrorResponse(res, 404, 'not_found');
    expect(seen).toHaveLength(0);
  });
});

describe('a failure of the local server itself', () => {
  it('answers the generic 500 with a request id, and loads the handler again on the next request', async () => {
    const quiet = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const failed = await api.request('GET', '/v1/events/signup/properties', { token });
      expectErrorResponse(failed, 500, 'internal_error');
      expect(failed.body).toEqual({ error: 'internal_error', message: 'An internal error occurred' });
      expect(failed.headers.get('x-request-id')).toBeTruthy();

      const retried = await api.request('GET', '/v1/events/signup/properties', { token });
      expect(retried.status).toBe(200);
      expect(retried.body).toEqual({ loaded: true });
    } finally {
      quiet.mockRestore();
    }
  });
});
