import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorResponse, ISO_UTC_TIMESTAMP } from '../support/http-assertions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Goals (an extension) end to end: the real HTTP server, the middy pipeline and dynalite, in the annotations table
// beside the domain's annotations.

const DOMAIN = 'goals.test';
const OTHER = 'other-goals.test';

let api: TestApi;
let writer: string;
let reader: string;
let otherDomainKey: string;

beforeAll(async () => {
  // The cap test adds 100 goals: more calls than the default 100 a minute.
  process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE = '1000';
  api = await startTestApi();
  writer = (await api.createKey({ type: 'personal', domains: [DOMAIN, 'many-goals.test'], owner: 'user_alice' })).token;
  reader = (await api.createKey({ domains: [DOMAIN], scopes: ['analytics:read'] })).token;
  otherDomainKey = (await api.createKey({ domains: [OTHER] })).token;
});

afterAll(async () => {
  delete process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
  await api?.close();
});

const create = (body: unknown, token = writer) => api.request('POST', '/v1/goals', { token, body });
const list = (domain: string, token = writer) => api.request('GET', '/v1/goals', { token, query: { domain } });
const remove = (id: string, domain: string, token = writer) =>
  api.request('DELETE', `/v1/goals/${encodeURIComponent(id)}`, { token, query: { domain } });

describe('goals', () => {
  it('adds an event goal and a page goal, lists them oldest first, and deletes one', async () => {
    const signup = await create({ domain: DOMAIN, event_name: 'signup' });
    expect(signup.status).toBe(201);
    expect(signup.body).toEqual({
      id: expect.stringMatching(/^goal-[0-9a-f]{32}$/),
      kind: 'event',
      event_name: 'signup',
      created_by: 'user_alice',
      created_at: expect.stringMatching(ISO_UTC_TIMESTAMP),
    });
    const blog = await create({ domain: DOMAIN, page_path: '/blog/*' });
    expect(blog.status).toBe(201);
    expect(blog.body).toMatchObject({ kind: 'page', page_path: '/blog/*' });
    expect(blog.body.event_name).toBeUndefined();

    const listed = await list(DOMAIN, reader);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ data: [signup.body, blog.body], meta: { domain: DOMAIN } });

    expect((await remove(signup.body.id, DOMAIN)).body).toEqual({ success: true });
    expectErrorResponse(await remove(signup.body.id, DOMAIN), 404, 'not_found');
    expect((await list(DOMAIN)).body.data).toEqual([blog.body]);
    expect((await remove(blog.body.id, DOMAIN)).status).toBe(200);
  });

  it('refuses the same goal twice with a 409, and keeps one', async () => {
    expect((await create({ domain: DOMAIN, event_name: 'download' })).status).toBe(201);
    const again = await create({ domain: DOMAIN, event_name: 'download' });
    expectErrorResponse(again, 409, 'conflict');
    expect(again.body.message).toBe('The domain already has this goal');
    // An event and a page of the same text are different goals.
    expect((await create({ domain: DOMAIN, page_path: '/download' })).status).toBe(201);
    const goals = (await list(DOMAIN)).body.data as { event_name?: string; page_path?: string }[];
    expect(goals.filter((g) => g.event_name === 'download')).toHaveLength(1);
    expect(goals.filter((g) => g.page_path === '/download')).toHaveLength(1);
  });

  it('says what a goal is when the body is not one', async () => {
    const rule = 'give either event_name (a custom event) or page_path (a page, e.g. "/signup" or "/blog/*")';
    for (const body of [{ domain: DOMAIN }, { domain: DOMAIN, event_name: 'a', page_path: '/a' }]) {
      const res = await create(body);
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.message).toBe(`event_name: ${rule}`);
    }
    expect((await create({ domain: DOMAIN, page_path: 'pricing' })).body.message).toBe('page_path: must start with /');
    expect((await create({ domain: DOMAIN, page_path: '/a*/b' })).body.message).toBe(
      'page_path: may hold * only at its end (every path it begins)',
    );
    expectErrorResponse(await create({ domain: DOMAIN, event_name: '' }), 400, 'invalid_request');
    expectErrorResponse(await create({ domain: DOMAIN, event_name: 'x'.repeat(513) }), 400, 'invalid_request');
    expectErrorResponse(await create({ domain: DOMAIN, event_name: 'a', extra: 1 }), 400, 'invalid_request');
  });

  it('needs the write scope to add or delete, and the domain in the key', async () => {
    expectErrorResponse(await create({ domain: DOMAIN, event_name: 'x' }, reader), 403, 'forbidden');
    expectErrorResponse(await create({ domain: DOMAIN, event_name: 'x' }, otherDomainKey), 403, 'forbidden');
    expectErrorResponse(await list(DOMAIN, otherDomainKey), 403, 'forbidden');
    const goal = (await create({ domain: DOMAIN, event_name: 'scoped' })).body;
    expectErrorResponse(await remove(goal.id, DOMAIN, reader), 403, 'forbidden');
    // Another domain's key naming its own domain finds no such goal there.
    expectErrorResponse(await remove(goal.id, OTHER, otherDomainKey), 404, 'not_found');
    expect((await list(DOMAIN)).body.data.map((g: { id: string }) => g.id)).toContain(goal.id);
  });

  it('shares the table with the annotations without either endpoint listing or deleting the other', async () => {
    const note = await api.request('POST', '/v1/annotations', {
      token: writer,
      body: { domain: DOMAIN, date: '2026-03-01', title: 'Launch' },
    });
    const goal = (await create({ domain: DOMAIN, event_name: 'beside-annotations' })).body;
    expectErrorResponse(await remove(note.body.id, DOMAIN), 404, 'not_found');
    const deleteGoalAsNote = await api.request('DELETE', `/v1/annotations/${goal.id}`, {
      token: writer,
      query: { domain: DOMAIN },
    });
    expectErrorResponse(deleteGoalAsNote, 404, 'not_found');
    const notes = await api.request('GET', '/v1/annotations', { token: writer, query: { domain: DOMAIN } });
    expect(notes.body.data.map((n: { id: string }) => n.id)).toEqual([note.body.id]);
    expect((await list(DOMAIN)).body.data.map((g: { id: string }) => g.id)).toContain(goal.id);
  });

  it('holds at most 100 goals a domain: the 101st is a 409 that says so', async () => {
    const many = 'many-goals.test';
    for (let i = 0; i < 100; i++) expect((await create({ domain: many, event_name: `e${i}` })).status).toBe(201);
    const over = await create({ domain: many, event_name: 'e100' });
    expectErrorResponse(over, 409, 'conflict');
    expect(over.body.message).toBe('The domain already has 100 goals; delete one first');
    expect((await list(many)).body.data).toHaveLength(100);
  });
});
