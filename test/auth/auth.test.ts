import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, clearCredentialCache } from '../../shared/auth/authenticate.js';
import { revokeCredential } from '../../shared/services/credentials.js';
import { expectErrorResponse } from '../support/http-assertions.js';
import { startTestApi, type TestApi, type TestResponse } from '../support/test-api.js';

// Credentials end to end (docs/API.md, "Authentication and access"): 401 for anything that is not a live
// key, 403 for a domain or scope the key lacks, the rate-limit headers on every authenticated answer.

let api: TestApi;
let projectKey: string;

beforeAll(async () => {
  api = await startTestApi();
  projectKey = (await api.createKey({ domains: ['example.com'] })).token;
});

afterAll(async () => {
  await api?.close();
});

/** A request with the Authorization header exactly as given (or none). */
async function withAuthorization(authorization: string | undefined): Promise<TestResponse> {
  const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
  const res = await fetch(new URL('/v1/annotations?domain=example.com', api.url), { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) };
}

const wellFormedUnknownToken = `aqk_0123456789abcdef_${'A'.repeat(43)}`;

describe('401 for anything that is not a live key', () => {
  it.each([
    ['no Authorization header', undefined],
    ['an empty Authorization header', ''],
    ['a Basic header', 'Basic x'],
    ['"Bearer" without a token', 'Bearer'],
    ['"Bearer" and spaces only', 'Bearer    '],
    ['a token without the Bearer scheme', wellFormedUnknownToken],
    ['a well-formed token that was never issued', `Bearer ${wellFormedUnknownToken}`],
    ['a garbage token', 'Bearer not-a-token'],
    ['two tokens', `Bearer ${wellFormedUnknownToken} ${wellFormedUnknownToken}`],
  ])('answers 401 to %s', async (_, authorization) => {
    const res = await withAuthorization(authorization);
    expectErrorResponse(res, 401, 'unauthorized');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('answers 401 to the right key id with a wrong secret', async () => {
    const real = projectKey.split('_');
    const forged = `${real[0]}_${real[1]}_${'B'.repeat(43)}`;
    expectErrorResponse(await withAuthorization(`Bearer ${forged}`), 401, 'unauthorized');
  });

  it('accepts the scheme name in any case', async () => {
    expect((await withAuthorization(`bearer ${projectKey}`)).status).toBe(200);
  });

  it('answers 401 once a key is revoked (after the credential cache expires)', async () => {
    const key = await api.createKey({ domains: ['example.com'] });
    expect((await withAuthorization(`Bearer ${key.token}`)).status).toBe(200);

    expect(await revokeCredential(key.key_id)).toBe(true);
    // The per-process cache may serve the key for up to 5 s; the API runs in this process, so skip the wait.
    clearCredentialCache();

    const res = await withAuthorization(`Bearer ${key.token}`);
    expectErrorResponse(res, 401, 'unauthorized');
  });

  it('lets a revocation bite within 10 s even while the key sits in the credential cache', async () => {
    const key = await api.createKey({ domains: ['example.com'] });
    expect((await withAuthorization(`Bearer ${key.token}`)).status).toBe(200); // now cached
    await revokeCredential(key.key_id);

    await expect(authenticate(`Bearer ${key.token}`, Date.now() + 10_000)).rejects.toMatchObject({ status: 401 });
  });

  it('says nothing about why a token failed beyond error and message', async () => {
    const answers = await Promise.all(
      [undefined, 'Bearer not-a-token', `Bearer ${wellFormedUnknownToken}`].map((h) => withAuthorization(h)),
    );
    for (const res of answers) {
      expect(res.body.message).not.toContain('aqk_');
      expect(res.body.message).not.toMatch(/dynamo|table|hash/i);
    }
  });
});

describe('403 for domains and scopes the key lacks', () => {
  let personal: string;
  let readOnly: string;

  beforeAll(async () => {
    personal = (await api.createKey({ type: 'personal', domains: ['one.example', 'two.example'] })).token;
    readOnly = (await api.createKey({ domains: ['example.com'], scopes: ['analytics:read'] })).token;
  });

  it.each(['one.example', 'two.example'])('lets a personal token read its domain %s', async (domain) => {
    const res = await api.request('GET', '/v1/annotations', { token: personal, query: { domain } });
    expect(res.status).toBe(200);
    expect(res.body.meta.domain).toBe(domain);
  });

  it('answers 403 to a personal token naming a third domain', async () => {
    const res = await api.request('GET', '/v1/annotations', { token: personal, query: { domain: 'three.example' } });
    expectErrorResponse(res, 403, 'forbidden');
  });

  it('answers 403 to a project key naming another domain', async () => {
    const res = await api.request('GET', '/v1/annotations', { token: projectKey, query: { domain: 'one.example' } });
    expectErrorResponse(res, 403, 'forbidden');
  });

  it('answers 403 to a key lacking the endpoint scope, before looking at the body', async () => {
    const res = await api.request('POST', '/v1/annotations', { token: readOnly, rawBody: '{not json' });
    expectErrorResponse(res, 403, 'forbidden');
  });
});

describe('usage limit', () => {
  it("answers 403 usage_limit_exceeded once the domain's month reaches the key's event limit", async () => {
    const limited = (await api.createKey({ domains: ['usage.example'], eventLimit: 2 })).token;
    const send = () => api.request('GET', '/v1/annotations', { token: limited, query: { domain: 'usage.example' } });

    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const over = await send();
    expectErrorResponse(over, 403, 'usage_limit_exceeded');
    expect(over.headers.get('x-ratelimit-limit')).toBe('100');
  });
});

describe('headers on every answer', () => {
  let key: string;
  let noWrite: string;
  let annotationId: string;

  beforeAll(async () => {
    key = (await api.createKey({ domains: ['headers.example'] })).token;
    noWrite = (await api.createKey({ domains: ['headers.example'], scopes: ['analytics:read'] })).token;
    const created = await api.request('POST', '/v1/annotations', {
      token: key,
      body: { domain: 'headers.example', date: '2026-01-01', title: 'x' },
    });
    annotationId = created.body.id;
  });

  const cases: Array<[string, number, () => Promise<TestResponse>]> = [
    [
      'a 200 list',
      200,
      () => api.request('GET', '/v1/annotations', { token: key, query: { domain: 'headers.example' } }),
    ],
    [
      'a 201 create',
      201,
      () =>
        api.request('POST', '/v1/annotations', {
          token: key,
          body: { domain: 'headers.example', date: '2026-01-02', title: 'y' },
        }),
    ],
    [
      'a 200 delete',
      200,
      () =>
        api.request('DELETE', `/v1/annotations/${annotationId}`, { token: key, query: { domain: 'headers.example' } }),
    ],
    ['a 400 for malformed JSON', 400, () => api.request('POST', '/v1/annotations', { token: key, rawBody: '{' })],
    [
      'a 400 for a bad query',
      400,
      () =>
        api.request('GET', '/v1/annotations', { token: key, query: { domain: 'headers.example', start_date: 'soon' } }),
    ],
    [
      'a 403 for a foreign domain',
      403,
      () => api.request('GET', '/v1/annotations', { token: key, query: { domain: 'example.com' } }),
    ],
    [
      'a 403 for a missing scope',
      403,
      () =>
        api.request('POST', '/v1/annotations', {
          token: noWrite,
          body: { domain: 'headers.example', date: '2026-01-02', title: 'y' },
        }),
    ],
    [
      'a 404 for an unknown annotation',
      404,
      () => api.request('DELETE', '/v1/annotations/nope', { token: key, query: { domain: 'headers.example' } }),
    ],
  ];

  it.each(cases)('%s carries X-RateLimit-Limit/Remaining/Reset and x-request-id', async (_, status, send) => {
    const before = Math.floor(Date.now() / 1000);
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    const remaining = Number(res.headers.get('x-ratelimit-remaining'));
    expect(Number.isInteger(remaining)).toBe(true);
    expect(remaining).toBeGreaterThanOrEqual(0);
    expect(remaining).toBeLessThan(100);
    const reset = Number(res.headers.get('x-ratelimit-reset'));
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThan(before);
    expect(reset).toBeLessThanOrEqual(before + 61);
  });

  it('counts each request down from the limit within one window', async () => {
    const fresh = (await api.createKey({ domains: ['headers.example'] })).token;
    const send = () => api.request('GET', '/v1/annotations', { token: fresh, query: { domain: 'headers.example' } });
    const first = await send();
    const second = await send();
    const sameWindow = first.headers.get('x-ratelimit-reset') === second.headers.get('x-ratelimit-reset');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('99');
    expect(second.headers.get('x-ratelimit-remaining')).toBe(sameWindow ? '98' : '99');
  });

  it('gives every response its own request id', async () => {
    const a = await api.request('GET', '/v1/annotations', { token: key, query: { domain: 'headers.example' } });
    const b = await api.request('GET', '/v1/annotations', { token: key, query: { domain: 'headers.example' } });
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});
