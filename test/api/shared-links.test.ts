import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorResponse, ISO_UTC_TIMESTAMP } from '../support/http-assertions.js';
import { startTestApi, type TestApi } from '../support/test-api.js';

// Shared links (an extension) end to end through HTTP on dynalite: a link is a read-only key of its own, listed
// without its token, revoked on its own; never the creator's key.

const DOMAIN = 'shared.test';
const OTHER = 'other-shared.test';

let api: TestApi;
let owner: string;
let reader: string;

beforeAll(async () => {
  // The cap test makes 50 links: more calls than the default 100 a minute with the rest.
  process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE = '1000';
  api = await startTestApi();
  owner = (await api.createKey({ type: 'personal', domains: [DOMAIN, 'many-links.test'], owner: 'user_ann' })).token;
  reader = (await api.createKey({ domains: [DOMAIN], scopes: ['analytics:read'] })).token;
  await api.createKey({ domains: [OTHER] });
});

afterAll(async () => {
  delete process.env.ANALYTICS_RATE_LIMIT_PER_MINUTE;
  await api?.close();
});

const create = (body: unknown, token = owner) => api.request('POST', '/v1/shared-links', { token, body });
const list = (domain: string, token = owner) => api.request('GET', '/v1/shared-links', { token, query: { domain } });
const revoke = (id: string, domain: string, token = owner) =>
  api.request('DELETE', `/v1/shared-links/${encodeURIComponent(id)}`, { token, query: { domain } });
const query = (token: string, domain = DOMAIN) =>
  api.request('POST', '/v1/query', { token, body: { domain, metrics: ['visitors'] } });

describe('shared links', () => {
  it('make a key that reads the domain and nothing else, listed without it, and revoked on its own', async () => {
    const made = await create({ domain: DOMAIN, name: '  Board meeting ' });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      id: `link-${made.body.key_id}`,
      key_id: expect.any(String),
      name: 'Board meeting',
      created_by: 'user_ann',
      created_at: expect.stringMatching(ISO_UTC_TIMESTAMP),
      token: expect.any(String),
    });
    const link = made.body.token as string;
    expect(link).not.toBe(owner);

    // It reads the domain...
    expect((await query(link)).status).toBe(200);
    expect((await api.request('GET', '/v1/goals', { token: link, query: { domain: DOMAIN } })).status).toBe(200);
    // ...and may write nothing, see no other link, read no other domain.
    const note = await api.request('POST', '/v1/annotations', {
      token: link,
      body: { domain: DOMAIN, date: '2026-03-01', title: 'x' },
    });
    expectErrorResponse(note, 403, 'forbidden');
    expectErrorResponse(await create({ domain: DOMAIN, name: 'more' }, link), 403, 'forbidden');
    expectErrorResponse(await list(DOMAIN, link), 403, 'forbidden');
    expectErrorResponse(await query(link, OTHER), 403, 'forbidden');

    const { token: _token, ...listed } = made.body;
    expect((await list(DOMAIN)).body).toEqual({ data: [listed], meta: { domain: DOMAIN } });

    expect((await revoke(made.body.id, DOMAIN)).body).toEqual({ success: true });
    expectErrorResponse(await query(link), 401, 'unauthorized');
    expectErrorResponse(await revoke(made.body.id, DOMAIN), 404, 'not_found');
    expect((await list(DOMAIN)).body.data).toEqual([]);
    // The creator's key is untouched.
    expect((await query(owner)).status).toBe(200);
  });

  it('need a key that may write the domain, and a name', async () => {
    expectErrorResponse(await create({ domain: DOMAIN, name: 'x' }, reader), 403, 'forbidden');
    expectErrorResponse(await list(DOMAIN, reader), 403, 'forbidden');
    expectErrorResponse(await create({ domain: OTHER, name: 'x' }), 403, 'forbidden');
    const unnamed = await create({ domain: DOMAIN, name: ' ' });
    expectErrorResponse(unnamed, 400, 'invalid_request');
    expect(unnamed.body.message).toBe('name: must not be empty');
    expectErrorResponse(await create({ domain: DOMAIN }), 400, 'invalid_request');
  });

  it('are neither goals nor annotations: those endpoints do not delete them', async () => {
    const made = (await create({ domain: DOMAIN, name: 'kept' })).body;
    for (const path of [`/v1/goals/${made.id}`, `/v1/annotations/${made.id}`]) {
      expectErrorResponse(await api.request('DELETE', path, { token: owner, query: { domain: DOMAIN } }), 404);
    }
    expect((await query(made.token)).status).toBe(200);
    expect((await list(DOMAIN)).body.data.map((l: { id: string }) => l.id)).toContain(made.id);
    expect((await api.request('GET', '/v1/goals', { token: owner, query: { domain: DOMAIN } })).body.data).toEqual([]);
    await revoke(made.id, DOMAIN);
  });

  it('read within the plan limit of the key that made them, not past it', async () => {
    const limited = 'limited-links.test';
    const creator = (await api.createKey({ domains: [limited], eventLimit: 3 })).token;
    const link = (await create({ domain: limited, name: 'small plan' }, creator)).body.token as string;
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await query(link, limited)).status);
    // API calls count toward the domain's month: the link's key is refused where its creator's would be.
    expect(statuses).toContain(403);
    expect(statuses.indexOf(403)).toBeLessThanOrEqual(3);
  });

  it('are at most 50 a domain: the 51st is a 409 that says so', async () => {
    const many = 'many-links.test';
    for (let i = 0; i < 50; i++) expect((await create({ domain: many, name: `l${i}` })).status).toBe(201);
    const over = await create({ domain: many, name: 'one more' });
    expectErrorResponse(over, 409, 'conflict');
    expect(over.body.message).toBe('The domain already has 50 shared links; revoke one first');
  });
});
