import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorResponse, ISO_UTC_TIMESTAMP } from '../support/http-assertions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Annotations end to end: the real HTTP server, the middy pipeline and dynalite.

const DOMAIN = 'example.com';
const OTHER = 'other.com';

let api: TestApi;
let writer: string;
let reader: string;
let writeOnly: string;
let otherDomainKey: string;
let bothDomainsToken: string;

beforeAll(async () => {
  api = await startTestApi();
  writer = (await api.createKey({ domains: [DOMAIN], owner: 'user_alice' })).token;
  reader = (await api.createKey({ domains: [DOMAIN], scopes: ['analytics:read'] })).token;
  writeOnly = (await api.createKey({ domains: [DOMAIN], scopes: ['analytics:write'] })).token;
  otherDomainKey = (await api.createKey({ domains: [OTHER] })).token;
  bothDomainsToken = (await api.createKey({ type: 'personal', domains: [DOMAIN, OTHER], owner: 'user_bob' })).token;
});

afterAll(async () => {
  await api?.close();
});

function create(body: unknown, token = writer) {
  return api.request('POST', '/v1/annotations', { token, body });
}

function list(query: Record<string, string>, token = writer) {
  return api.request('GET', '/v1/annotations', { token, query });
}

function remove(id: string, domain: string, token = writer) {
  return api.request('DELETE', `/v1/annotations/${encodeURIComponent(id)}`, { token, query: { domain } });
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('POST /v1/annotations', () => {
  it('answers 201 with exactly the annotation fields, created_by the key owner and UTC timestamps', async () => {
    const before = Date.now();
    const res = await create({ domain: DOMAIN, date: '2026-03-14', title: 'Launch day' });

    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'created_by', 'date', 'id', 'title', 'updated_at']);
    expect(res.body).toMatchObject({ date: '2026-03-14', title: 'Launch day', created_by: 'user_alice' });
    expect(typeof res.body.id).toBe('string');
    expect(res.body.id.length).toBeGreaterThan(0);
    expect(res.body.created_at).toMatch(ISO_UTC_TIMESTAMP);
    expect(res.body.updated_at).toMatch(ISO_UTC_TIMESTAMP);
    expect(Date.parse(res.body.created_at)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(res.body.created_at)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it('uses the owner of a personal token as created_by', async () => {
    const res = await create({ domain: OTHER, date: '2026-03-14', title: 'From Bob' }, bothDomainsToken);
    expect(res.status).toBe(201);
    expect(res.body.created_by).toBe('user_bob');
  });

  it('trims the title before storing it', async () => {
    const res = await create({ domain: DOMAIN, date: '2026-03-15', title: '  padded title \n' });
    expect(res.status).toBe(201);
    expect(res.body.title).toBe('padded title');
  });

  it('accepts a title of exactly 250 characters, also when surrounding spaces make it longer', async () => {
    for (const title of ['a'.repeat(250), `  ${'b'.repeat(250)}  `]) {
      const res = await create({ domain: DOMAIN, date: '2026-03-16', title });
      expect(res.status, title).toBe(201);
      expect(res.body.title).toBe(title.trim());
    }
  });

  it('counts characters, not UTF-16 code units: 250 emoji are a valid title', async () => {
    const res = await create({ domain: DOMAIN, date: '2026-03-16', title: '📈'.repeat(250) });
    expect(res.status).toBe(201);
  });

  it.each([
    ['a title of 251 characters', { domain: DOMAIN, date: '2026-03-14', title: 'a'.repeat(251) }, 'title'],
    ['251 emoji', { domain: DOMAIN, date: '2026-03-14', title: '📈'.repeat(251) }, 'title'],
    ['an empty title', { domain: DOMAIN, date: '2026-03-14', title: '' }, 'title'],
    ['a whitespace-only title', { domain: DOMAIN, date: '2026-03-14', title: ' \t\n ' }, 'title'],
    ['a missing title', { domain: DOMAIN, date: '2026-03-14' }, 'title'],
    ['February 30th', { domain: DOMAIN, date: '2026-02-30', title: 'x' }, 'date'],
    ['month 13', { domain: DOMAIN, date: '2026-13-01', title: 'x' }, 'date'],
    ['an unpadded date', { domain: DOMAIN, date: '2026-1-1', title: 'x' }, 'date'],
    ['a timestamp instead of a date', { domain: DOMAIN, date: '2026-03-14T00:00:00Z', title: 'x' }, 'date'],
    ['a missing date', { domain: DOMAIN, title: 'x' }, 'date'],
    ['a missing domain', { date: '2026-03-14', title: 'x' }, 'domain'],
    ['an unknown field', { domain: DOMAIN, date: '2026-03-14', title: 'x', color: 'red' }, 'color'],
    ['a numeric title (never coerced)', { domain: DOMAIN, date: '2026-03-14', title: 42 }, 'title'],
    ['a numeric date (never coerced)', { domain: DOMAIN, date: 20260314, title: 'x' }, 'date'],
    ['a null title', { domain: DOMAIN, date: '2026-03-14', title: null }, 'title'],
  ])('rejects %s with a 400 naming the field', async (_, body, field) => {
    const res = await create(body);
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it.each([
    ['an array', [{ domain: DOMAIN, date: '2026-03-14', title: 'x' }]],
    ['a string', 'hello'],
    ['null', null],
    ['a number', 7],
  ])('rejects a body that is %s with a 400', async (_, body) => {
    const res = await create(body);
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.details).toEqual([{ path: 'body', message: expect.any(String) }]);
  });

  it('reads the body as JSON whatever the content type (curl -d sends form encoding)', async () => {
    const rawBody = JSON.stringify({ domain: DOMAIN, date: '2026-03-17', title: 'sent as text/plain' });
    const res = await api.request('POST', '/v1/annotations', { token: writer, rawBody });
    expect(res.status).toBe(201);
    expect(res.body.title).toBe('sent as text/plain');
  });

  it.each([
    ['malformed JSON', '{"domain": "example.com",'],
    ['an empty body', ''],
    ['form encoding', 'domain=example.com&date=2026-03-14&title=x'],
  ])('rejects %s with a 400 saying the body is not a JSON object', async (_, rawBody) => {
    const res = await api.request('POST', '/v1/annotations', { token: writer, rawBody });
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.details[0].path).toBe('body');
  });

  it('answers 403 for a domain the key does not hold', async () => {
    expectErrorResponse(await create({ domain: OTHER, date: '2026-03-14', title: 'x' }), 403, 'forbidden');
  });

  it('answers 403 to a read-only key', async () => {
    expectErrorResponse(await create({ domain: DOMAIN, date: '2026-03-14', title: 'x' }, reader), 403, 'forbidden');
  });
});

describe('GET /v1/annotations', () => {
  const LIST_DOMAIN = 'list.example.com';
  let listKey: string;
  const created: Array<{ id: string; date: string; created_at: string; title: string }> = [];

  beforeAll(async () => {
    listKey = (await api.createKey({ domains: [LIST_DOMAIN] })).token;
    // Out of date order on purpose, with two on one day to pin the created_at tie-break.
    for (const [date, title] of [
      ['2026-02-10', 'middle, first of the day'],
      ['2026-03-01', 'last'],
      ['2026-01-05', 'first'],
      ['2026-02-10', 'middle, second of the day'],
    ] as const) {
      const res = await create({ domain: LIST_DOMAIN, date, title }, listKey);
      expect(res.status).toBe(201);
      created.push(res.body);
      await sleep(5);
    }
  });

  const titles = (res: { body: { data: Array<{ title: string }> } }) => res.body.data.map((a) => a.title);

  it('lists by date ascending, then by creation time, with the stored fields and meta', async () => {
    const res = await list({ domain: LIST_DOMAIN }, listKey);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'meta']);
    expect(titles(res)).toEqual(['first', 'middle, first of the day', 'middle, second of the day', 'last']);
    expect(res.body.meta).toEqual({ domain: LIST_DOMAIN, date_range: [null, null] });
    const first = created.find((a) => a.title === 'first');
    expect(res.body.data[0]).toEqual(first);
  });

  it.each([
    [
      'both bounds, inclusive',
      { start_date: '2026-02-10', end_date: '2026-03-01' },
      ['middle, first of the day', 'middle, second of the day', 'last'],
      ['2026-02-10', '2026-03-01'],
    ],
    [
      'a single day',
      { start_date: '2026-02-10', end_date: '2026-02-10' },
      ['middle, first of the day', 'middle, second of the day'],
      ['2026-02-10', '2026-02-10'],
    ],
    ['only start_date, inclusive', { start_date: '2026-03-01' }, ['last'], ['2026-03-01', null]],
    ['only end_date, inclusive', { end_date: '2026-01-05' }, ['first'], [null, '2026-01-05']],
    [
      'a range with nothing in it',
      { start_date: '2025-01-01', end_date: '2025-12-31' },
      [],
      ['2025-01-01', '2025-12-31'],
    ],
  ])('filters by %s and echoes the bounds in meta.date_range', async (_, bounds, expected, dateRange) => {
    const res = await list({ domain: LIST_DOMAIN, ...bounds }, listKey);
    expect(res.status).toBe(200);
    expect(titles(res)).toEqual(expected);
    expect(res.body.meta).toEqual({ domain: LIST_DOMAIN, date_range: dateRange });
  });

  it('lists only the annotations of the requested domain', async () => {
    const res = await list({ domain: OTHER }, bothDomainsToken);
    expect(res.status).toBe(200);
    expect(res.body.data.every((a: { title: string }) => !a.title.startsWith('middle'))).toBe(true);
  });

  it.each([
    [
      'start_date after end_date',
      { domain: LIST_DOMAIN, start_date: '2026-03-02', end_date: '2026-03-01' },
      'start_date',
    ],
    ['an impossible start_date', { domain: LIST_DOMAIN, start_date: '2026-02-30' }, 'start_date'],
    ['a malformed end_date', { domain: LIST_DOMAIN, end_date: '03/01/2026' }, 'end_date'],
    ['a missing domain', {}, 'domain'],
    ['an empty domain', { domain: '' }, 'domain'],
  ])('rejects %s with a 400', async (_, query, field) => {
    const res = await list(query, listKey);
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain(field);
  });

  it('answers 403 for a domain the key does not hold', async () => {
    expectErrorResponse(await list({ domain: OTHER }), 403, 'forbidden');
  });

  it('answers 200 to a read-only key', async () => {
    const res = await list({ domain: DOMAIN }, reader);
    expect(res.status).toBe(200);
  });

  it('answers 403 to a write-only key', async () => {
    expectErrorResponse(await list({ domain: DOMAIN }, writeOnly), 403, 'forbidden');
  });
});

describe('DELETE /v1/annotations/:id', () => {
  it('deletes an annotation, answers {"success":true}, and 404 the second time', async () => {
    const { body: annotation } = await create({ domain: DOMAIN, date: '2026-04-01', title: 'to delete' });

    const first = await remove(annotation.id, DOMAIN);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true });

    const listed = await list({ domain: DOMAIN, start_date: '2026-04-01', end_date: '2026-04-01' });
    expect(listed.body.data).toEqual([]);

    expectErrorResponse(await remove(annotation.id, DOMAIN), 404, 'not_found');
  });

  it('answers 404 for an id that never existed', async () => {
    expectErrorResponse(await remove('00000000-0000-0000-0000-000000000000', DOMAIN), 404, 'not_found');
  });

  it("answers 404 when the id belongs to another of the key's domains, and leaves it in place", async () => {
    const { body: annotation } = await create(
      { domain: OTHER, date: '2026-04-02', title: 'other domain' },
      bothDomainsToken,
    );

    expectErrorResponse(await remove(annotation.id, DOMAIN, bothDomainsToken), 404, 'not_found');

    const listed = await list({ domain: OTHER, start_date: '2026-04-02', end_date: '2026-04-02' }, bothDomainsToken);
    expect(listed.body.data.map((a: { id: string }) => a.id)).toEqual([annotation.id]);
  });

  it('answers 403 when the key does not hold the domain named, whatever the id', async () => {
    const { body: annotation } = await create(
      { domain: OTHER, date: '2026-04-03', title: 'not yours' },
      otherDomainKey,
    );
    expectErrorResponse(await remove(annotation.id, OTHER, writer), 403, 'forbidden');
  });

  it('answers 403 to a read-only key', async () => {
    const { body: annotation } = await create({ domain: DOMAIN, date: '2026-04-04', title: 'kept' });
    expectErrorResponse(await remove(annotation.id, DOMAIN, reader), 403, 'forbidden');
  });

  it('answers 400 without the domain query parameter', async () => {
    const res = await api.request('DELETE', '/v1/annotations/some-id', { token: writer });
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.details.map((d: { path: string }) => d.path)).toContain('domain');
  });
});
