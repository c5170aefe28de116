import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { QueryEngine } from '../../shared/engines/engine.js';
import { EngineBusyError, EngineScanLimitError, EngineTimeoutError } from '../../shared/engines/engine-errors.js';
import { installEngine } from '../../shared/engines/registry.js';
import { expectErrorResponse, expectNoInternals } from '../support/http-assertions.js';
import { startTestApi, type TestApi, type TestResponse } from '../support/test-api.js';

// An unexpected failure inside a handler is a generic 500: no stack trace, no SDK exception, no table name.
// The failure is forced by pointing the annotations table at one that does not exist (config is read per call).

const MISSING_TABLE = 'analytics-annotations-missing-for-test';
const DOMAIN = 'example.com';

let api: TestApi;
let token: string;
const savedTable = process.env.ANNOTATIONS_TABLE;

beforeAll(async () => {
  api = await startTestApi();
  token = (await api.createKey({ domains: [DOMAIN] })).token;
});

afterEach(() => {
  if (savedTable === undefined) delete process.env.ANNOTATIONS_TABLE;
  else process.env.ANNOTATIONS_TABLE = savedTable;
});

afterAll(async () => {
  await api?.close();
});

async function rawText(method: string, path: string, body?: string): Promise<{ res: Response; text: string }> {
  const res = await fetch(new URL(path, api.url), { method, headers: { authorization: `Bearer ${token}` }, body });
  return { res, text: await res.text() };
}

describe('an unexpected error inside a handler', () => {
  it.each([
    ['GET', `/v1/annotations?domain=${DOMAIN}`, undefined],
    ['POST', '/v1/annotations', JSON.stringify({ domain: DOMAIN, date: '2026-01-01', title: 'x' })],
    ['DELETE', `/v1/annotations/some-id?domain=${DOMAIN}`, undefined],
  ])('%s %s answers exactly the generic 500, naming nothing internal', async (method, path, body) => {
    process.env.ANNOTATIONS_TABLE = MISSING_TABLE;
    const { res, text } = await rawText(method, path, body);

    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(JSON.parse(text)).toEqual({ error: 'internal_error', message: 'An internal error occurred' });
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    for (const [name, value] of res.headers) {
      expect(`${name}: ${value}`).not.toContain(MISSING_TABLE);
      expectNoInternals(`${name}: ${value}`);
    }
    expect(text).not.toContain(MISSING_TABLE);
    expect(text).not.toMatch(/ResourceNotFound|dynamo|annotations-repo/i);
  });

  it('leaves the API healthy once the cause is gone', async () => {
    process.env.ANNOTATIONS_TABLE = MISSING_TABLE;
    expect((await rawText('GET', `/v1/annotations?domain=${DOMAIN}`)).res.status).toBe(500);
    delete process.env.ANNOTATIONS_TABLE;
    if (savedTable !== undefined) process.env.ANNOTATIONS_TABLE = savedTable;
    expect((await rawText('GET', `/v1/annotations?domain=${DOMAIN}`)).res.status).toBe(200);
  });
});

describe('client errors never echo parser internals', () => {
  const asResponse = async (method: string, path: string, body?: string): Promise<TestResponse> => {
    const { res, text } = await rawText(method, path, body);
    return { status: res.status, headers: res.headers, body: JSON.parse(text) };
  };

  it.each([
    ['truncated JSON', '{"domain": "example.com", "title": '],
    ['a lone brace', '{'],
    ['binary noise', '\u0000\u0001\u0002'],
    ['deep nesting', '['.repeat(10_000)],
  ])('answers %s with a plain 400', async (_, body) => {
    const res = await asResponse('POST', '/v1/annotations', body);
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.message).not.toMatch(/Unexpected|position|JSON\.parse|SyntaxError/);
  });
});

describe('engine failures the client can act on', () => {
  const failingWith = (error: Error): QueryEngine => ({
    target: api.engine.target,
    billedPerStatement: false,
    run: async () => Promise.reject(error),
  });
  afterEach(() => installEngine(api.engine));

  it.each([
    ['a timeout', new EngineTimeoutError(), 504, 'query_timeout'],
    ['a busy engine', new EngineBusyError(7), 503, 'service_unavailable'],
    ['the scan limit', new EngineScanLimitError(), 400, 'query_too_large'],
  ] as const)('answers %s with its own status through HTTP', async (_, error, status, code) => {
    installEngine(failingWith(error));
    const res = await api.request('POST', '/v1/query', {
      token,
      body: { domain: DOMAIN, date_range: ['2026-01-01', '2026-01-02'] },
    });
    expectErrorResponse(res, status, code);
    if (status === 503) expect(res.headers.get('retry-after')).toBe('7');
  });
});
